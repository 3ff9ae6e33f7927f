import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// The write pipeline's rule: memory moves with the commit; decoding and observers run with the store's
  /// lock released — so another thread can use the store meanwhile (a recursive lock would hide a
  /// violation from a callback on the same thread, so these tests ask from another thread).
  @Suite struct WritePipelineTests {
    /// Whether another thread gets through `store.keys()` within two seconds: false when the store's
    /// lock is held by the caller.
    static func storeIsFreeForAnotherThread(_ store: PersistentStore) -> Bool {
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        _ = try? store.keys()
        done.signal()
      }
      thread.start()
      return done.wait(timeout: .now() + 2) == .success
    }

    /// A value whose decoding reports whether the store's lock was free at that moment.
    struct Probe: Codable, Sendable {
      static let store = Locked<PersistentStore?>(nil)
      static let decodedWithLockFree = Locked<[Bool]>([])
      var number: Int

      init(number: Int) { self.number = number }

      init(from decoder: any Decoder) throws {
        number = try decoder.singleValueContainer().decode(Int.self)
        if let store = Self.store.withLock({ $0 }) {
          let free = WritePipelineTests.storeIsFreeForAnotherThread(store)
          Self.decodedWithLockFree.withLock { $0.append(free) }
        }
      }

      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(number)
      }
    }

    @Test func rawJSONWrittenByTheToolIsDecodedWithTheLockReleased() throws {
      let folder = try TemporaryDirectory("pipeline")
      let store = try PersistentStore(path: folder.path("store.db"))
      let live = try store.liveData("probe", default: Probe(number: 0))
      Probe.store.withLock { $0 = store }
      defer { Probe.store.withLock { $0 = nil } }

      let version = try store.setJSON(Data("7".utf8), forKey: "probe")

      #expect(version == 1)
      #expect(live.version == 1 && live.value.number == 7)
      #expect(Probe.decodedWithLockFree.withLock { $0 } == [true])
    }

    @MainActor @Test func observersOfASetRunWithTheLockReleased() throws {
      let store = try PersistentStore.inMemory()
      let count = try store.liveData("count", default: 0)
      var lockWasFree: [Bool] = []
      let observer = count.observeForever(receiveCurrent: false) { _ in
        lockWasFree.append(Self.storeIsFreeForAnotherThread(store))
      }
      defer { observer.cancel() }

      try count.set(1)
      try count.update { $0 += 1 }

      #expect(lockWasFree == [true, true])
    }

    @MainActor @Test func observersOfATransactionRunAfterItsCommitWithTheLockReleased() throws {
      let store = try PersistentStore.inMemory()
      let first = try store.liveData("first", default: 0)
      let second = try store.liveData("second", default: 0)
      var seen: [String] = []
      let observers = [
        first.observeForever(receiveCurrent: false) { value in
          seen.append("first=\(value) second=\(second.value) free=\(Self.storeIsFreeForAnotherThread(store))")
        },
        second.observeForever(receiveCurrent: false) { value in
          seen.append("second=\(value) free=\(Self.storeIsFreeForAnotherThread(store))")
        },
      ]
      defer { for observer in observers { observer.cancel() } }

      try store.transaction {
        try first.set(1)
        try second.set(2)
        #expect(first.version == 0 && second.version == 0, "memory moves with the commit, not before")
      }

      // Both values had moved before anyone was notified, and in commit order.
      #expect(seen == ["first=1 second=2 free=true", "second=2 free=true"])
    }

    @Test func aVersionWrittenWhileAnInstanceIsCreatedIsNotMissed() throws {
      let store = try PersistentStore.inMemory()
      // Many rounds: a raw write racing the creation of the key's first live instance.
      for round in 0..<200 {
        let key = "race-\(round)"
        let written = DispatchSemaphore(value: 0)
        let writer = Thread {
          _ = try? store.setJSON(Data("1".utf8), forKey: key)
          written.signal()
        }
        writer.start()
        let live = try store.liveData(key, default: 0)
        #expect(written.wait(timeout: .now() + 5) == .success)
        // Whatever the interleaving, the live instance ends on the stored version before anyone asks.
        #expect(live.version == 1 && live.value == 1, "round \(round)")
      }
    }
  }

  /// Errors read well through Foundation too.
  @Suite struct ErrorPresentationTests {
    @Test(arguments: [
      PersistentLiveDataError.diskFull(path: "/data/app.db"),
      .unknownVersion(key: "theme", version: 9),
      .storeClosed(path: nil),
      .versionsExhausted(key: "k", path: "/data/app.db"),
      .undecodable(key: "settings", version: 3, reason: "missing key \"x\""),
    ])
    func localizedDescriptionIsTheDescription(error: PersistentLiveDataError) {
      let asAnyError: any Error = error
      #expect(asAnyError.localizedDescription == error.description)
      #expect(!asAnyError.localizedDescription.contains("could not be completed"))
    }
  }
}
