import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// `set` and `update` from several real threads at once: every write is a version, none is lost.
  @Suite(.timeLimit(deadlockTimeLimit)) struct ConcurrentWriteTests {
    @Test func fourThreadsTimesTwoHundredSetsGiveEightHundredGapFreeVersions() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let value = try store.liveData("value", default: -1)
      let errors = ErrorBox()
      onThreads(4) { thread in
        for index in 0..<200 {
          do { try value.set(thread * 1_000 + index) } catch { errors.record(error) }
        }
      }
      #expect(errors.errors.isEmpty)
      #expect(value.version == 800)
      let history = try value.history()
      #expect(history.map(\.version) == Array((1...800).reversed()), "800 versions, newest first, no gap")
      #expect(history.first?.value == value.value, "the latest version equals value")
      let written = Set((0..<4).flatMap { thread in (0..<200).map { thread * 1_000 + $0 } })
      #expect(Set(history.map(\.value)) == written, "every write is a version; none lost or duplicated")
      // Each thread's writes keep their order.
      for thread in 0..<4 {
        let own = history.reversed().map(\.value).filter { $0 / 1_000 == thread }
        #expect(own == (0..<200).map { thread * 1_000 + $0 })
      }

      try store.close()
      let reopened = try PersistentStore(path: path)
      let restored = try reopened.liveData("value", default: -1)
      #expect(restored.version == 800)
      #expect(restored.value == history.first?.value)
    }

    @Test func updateIsAnAtomicReadModifyWrite() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let errors = ErrorBox()
      onThreads(4) { _ in
        for _ in 0..<100 {
          do { try count.update { $0 += 1 } } catch { errors.record(error) }
        }
      }
      #expect(errors.errors.isEmpty)
      #expect(count.value == 400, "no increment lost")
      #expect(count.version == 400)
      let history = try count.history()
      #expect(
        history.map(\.value) == Array((1...400).reversed()),
        "version n holds n: each update saw the previous one")
      #expect(history.map(\.version) == Array((1...400).reversed()))
    }

    @Test func updateReturnsTheValueItWrote() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let returned = ResultBox()
      onThreads(4) { _ in
        for _ in 0..<50 {
          if let value = try? count.update({ $0 += 1 }) { returned.add(value) }
        }
      }
      #expect(returned.values.sorted() == Array(1...200), "each update returns a distinct written value")
    }

    @Test func concurrentWritesToDifferentKeysKeepEachKeyGapFree() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let values = try (0..<4).map { try store.liveData("key-\($0)", default: 0) }
      let errors = ErrorBox()
      onThreads(4) { thread in
        for index in 1...100 {
          do {
            try values[thread].set(index)
            try values[(thread + 1) % 4].update { $0 += 0 }
          } catch { errors.record(error) }
        }
      }
      #expect(errors.errors.isEmpty)
      for value in values {
        #expect(value.version == 200)
        #expect(try value.history().map(\.version) == Array((1...200).reversed()))
      }
      #expect(try store.keys() == ["key-0", "key-1", "key-2", "key-3"])
    }

    @Test func transactionsAndSingleWritesFromSeveralThreadsStayAtomicAndGapFree() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let from = try store.liveData("from", default: 1_000)
      let to = try store.liveData("to", default: 0)
      let log = try store.liveData("log", default: 0)
      let errors = ErrorBox()
      onThreads(4) { thread in
        for _ in 0..<50 {
          do {
            if thread < 2 {
              try store.transaction {
                try from.update { $0 -= 1 }
                try to.update { $0 += 1 }
              }
            } else {
              try log.update { $0 += 1 }
            }
          } catch {
            errors.record(error)
          }
        }
      }
      #expect(errors.errors.isEmpty)
      #expect(from.value == 900)
      #expect(to.value == 100)
      #expect(from.version == 100)
      #expect(to.version == 100)
      #expect(log.value == 100)
      #expect(log.version == 100)
      let fromHistory = try from.history()
      let toHistory = try to.history()
      #expect(fromHistory.map(\.version) == Array((1...100).reversed()))
      // Every committed transfer kept the total: version n of both keys was written together.
      for (fromEntry, toEntry) in zip(fromHistory, toHistory) {
        #expect(fromEntry.value + toEntry.value == 1_000, "v\(fromEntry.version)")
      }
    }

    @Test func concurrentLiveDataRequestsGetOneInstance() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      try store.liveData("shared", default: 0).set(7)
      let instances = InstanceBox()
      onThreads(4) { _ in
        for _ in 0..<50 {
          if let live = try? store.liveData("shared", default: 0) { instances.add(live) }
        }
      }
      #expect(instances.distinctCount == 1)
    }
  }

  final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [Int] = []
    func add(_ value: Int) { lock.withLock { collected.append(value) } }
    var values: [Int] { lock.withLock { collected } }
  }

  final class InstanceBox: @unchecked Sendable {
    private let lock = NSLock()
    private var identifiers: Set<ObjectIdentifier> = []
    private var kept: [AnyObject] = []
    func add(_ object: AnyObject) {
      lock.withLock {
        identifiers.insert(ObjectIdentifier(object))
        kept.append(object)
      }
    }
    var distinctCount: Int { lock.withLock { identifiers.count } }
  }
}
