import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// Observers are notified after the commit, never before, never for a failed set, and may call back into
  /// the store from their callbacks.
  @MainActor @Suite struct ObserverNotificationTests {
    /// What an observer saw when it was called.
    struct Seen: Equatable {
      let delivered: Int
      let liveVersion: Int64
      let newestStoredVersion: Int64?
      let newestStoredValue: Int?
      let storedAtLiveVersion: Int?
    }

    @Test func observerSeesTheCommittedVersionWhenCalled() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let seen = DeliveryRecorder<Seen>()
      var callbackErrors: [String] = []
      let observer = count.observeForever(receiveCurrent: false) { delivered in
        do {
          let newest = try count.history(limit: 1).first
          seen.record(
            Seen(
              delivered: delivered, liveVersion: count.version, newestStoredVersion: newest?.version,
              newestStoredValue: newest?.value, storedAtLiveVersion: try count.value(at: count.version)))
        } catch {
          callbackErrors.append("\(error)")
        }
      }
      defer { observer.cancel() }

      for number in [10, 20, 20, 30] {
        try count.set(number)
      }
      #expect(callbackErrors.isEmpty)
      seen.expect(
        [
          Seen(
            delivered: 10, liveVersion: 1, newestStoredVersion: 1, newestStoredValue: 10,
            storedAtLiveVersion: 10),
          Seen(
            delivered: 20, liveVersion: 2, newestStoredVersion: 2, newestStoredValue: 20,
            storedAtLiveVersion: 20),
          Seen(
            delivered: 20, liveVersion: 3, newestStoredVersion: 3, newestStoredValue: 20,
            storedAtLiveVersion: 20),
          Seen(
            delivered: 30, liveVersion: 4, newestStoredVersion: 4, newestStoredValue: 30,
            storedAtLiveVersion: 30),
        ], "set on the main actor notifies synchronously, after the commit")
    }

    /// Another process (the sqlite3 client) already sees the version when the observer is called: it was
    /// committed, not only written inside an open transaction.
    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func versionIsVisibleToAnotherConnectionWhenObserverIsCalled() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let flag = try store.liveData("flag", default: false)
      let seenByOtherConnection = DeliveryRecorder<String>()
      let observer = flag.observeForever(receiveCurrent: false) { _ in
        seenByOtherConnection.record(
          (try? SQLiteCLI.query(path, "SELECT max(version) FROM pld_values WHERE key = 'flag'")) ?? "error")
      }
      defer { observer.cancel() }
      try flag.set(true)
      try flag.set(false)
      seenByOtherConnection.expect(["1", "2"])
    }

    @Test func setsFromAnotherThreadAreDeliveredAfterTheirCommit() async throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let recorder = DeliveryRecorder<Seen>()
      let observer = count.observeForever(receiveCurrent: false) { delivered in
        let newest = try? count.history(limit: 1).first
        recorder.record(
          Seen(
            delivered: delivered, liveVersion: count.version, newestStoredVersion: newest?.version,
            newestStoredValue: newest?.value,
            storedAtLiveVersion: (try? count.value(at: count.version)) ?? nil))
      }
      defer { observer.cancel() }

      let afterSet = ErrorBox()
      let writer = RunningThreads(1) { _ in
        for number in 1...50 {
          do {
            try count.set(number)
            // The only writer: value and version are exactly what it wrote, before set returns.
            if count.version != Int64(number) || count.value != number {
              afterSet.record(
                TestSupportError("after set(\(number)): value \(count.value), v\(count.version)"))
            }
          } catch {
            afterSet.record(error)
          }
        }
      }
      let delivered = await eventually(timeout: .seconds(20)) {
        writer.isFinished && recorder.all.last?.delivered == 50
      }
      let seen = recorder.takePending()
      #expect(
        delivered,
        "the latest value reaches the observer (got \(seen.last.map { "\($0.delivered)" } ?? "nothing"))")
      #expect(afterSet.errors.isEmpty)
      #expect(count.version == 50)
      for entry in seen {
        // Delivery may skip intermediate values, but what is delivered was committed first.
        #expect(entry.newestStoredVersion.map { $0 >= Int64(entry.delivered) } == true, "\(entry)")
        #expect(entry.liveVersion >= Int64(entry.delivered))
      }
      // Coalescing may skip values, never repeat one: strictly increasing.
      #expect(
        zip(seen, seen.dropFirst()).allSatisfy { $0.delivered < $1.delivered },
        "delivered in order, each at most once: \(seen.map(\.delivered))")
    }

    /// A transaction off the main actor that writes several keys: once the main actor has run the
    /// deliveries it scheduled (one job for the commit), every key's observer has its key's new value,
    /// exactly once, in the order the keys were written; a key released before that job runs is not
    /// kept alive by it.
    @Test func aTransactionOfSeveralKeysOffTheMainActorDeliversEachOnce() async throws {
      let store = try PersistentStore.inMemory()
      let keys = ["a", "b", "c", "d"]
      let values = try keys.map { try store.liveData($0, default: 0) }
      let order = DeliveryRecorder<String>()
      let observers = zip(keys, values).map { key, value in
        value.observeForever(receiveCurrent: false) { delivered in order.record("\(key)=\(delivered)") }
      }
      defer { observers.forEach { $0.cancel() } }
      // The transaction runs on another thread while the main actor is held, so that the deliveries it
      // schedules cannot run before the checks.
      let releasedBeforeDelivery = Self.whileHoldingTheMainActor {
        let released = WeakLiveData()
        try store.transaction {
          for (index, value) in values.enumerated() { try value.set(index + 1) }
          let temporary = try store.liveData("temporary", default: 0)
          try temporary.set(9)
          released.value = temporary
        }
        return released.value == nil
      }
      #expect(releasedBeforeDelivery == true, "a delivery still to run does not keep its LiveData alive")
      #expect(order.takePending().isEmpty, "nothing is delivered before the main actor runs")
      // Yielding the main actor lets the delivery job, enqueued before, run.
      #expect(await eventually { order.all.count >= 4 })
      #expect(order.takePending() == ["a=1", "b=2", "c=3", "d=4"])
      for _ in 0..<5 { await Task.yield() }
      #expect(order.takePending().isEmpty, "each key's value was delivered once")
    }

    /// Runs `body` on another thread and waits for it, holding the main actor meanwhile; nil if it threw.
    static func whileHoldingTheMainActor<Result: Sendable>(
      _ body: @escaping @Sendable () throws -> Result
    ) -> Result? {
      let outcome = Locked<Result?>(nil)
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        outcome.withLock { $0 = try? body() }
        done.signal()
      }
      done.wait()
      return outcome.withLock { $0 }
    }

    @Test func failedSetsFromAnotherThreadAreNeverDelivered() async throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let reading = try store.liveData("reading", default: Reading(value: 0))
      let delivered = DeliveryRecorder<Reading>()
      let observer = reading.observeForever(receiveCurrent: false, delivered.callback)
      defer { observer.cancel() }
      let unexpected = ErrorBox()
      let writer = RunningThreads(1) { _ in
        do {
          try reading.set(Reading(value: .nan))
          unexpected.record(TestSupportError("NaN was accepted"))
        } catch {}
        do {
          try reading.set(Reading(value: 1))
        } catch {
          unexpected.record(error)
        }
      }
      #expect(await eventually { writer.isFinished && delivered.count > 0 })
      #expect(unexpected.errors.isEmpty)
      delivered.expect([Reading(value: 1)])
      #expect(reading.version == 1)
    }

    @Test func observerMayReadAndWriteTheStoreFromItsCallback() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let source = try store.liveData("source", default: 0)
      let log = try store.liveData("log", default: [Int]())
      // What the callback read: the length of the history and the keys.
      struct Call: Equatable {
        let historyLength: Int
        let keys: [String]
      }
      let calls = DeliveryRecorder<Call>()
      var failures: [String] = []
      let observer = source.observeForever(receiveCurrent: false) { value in
        do {
          let historyLength = try source.history().count
          _ = try source.value(at: source.version)
          calls.record(Call(historyLength: historyLength, keys: try store.keys().sorted()))
          let sameInstance = try store.liveData("source", default: 0)
          if sameInstance !== source { failures.append("liveData returned another instance") }
          try log.update { $0.append(value) }  // a write to another key from inside the callback
        } catch {
          failures.append("\(error)")
        }
      }
      defer { observer.cancel() }
      try source.set(1)
      try source.set(2)
      #expect(failures.isEmpty)
      calls.expect([
        Call(historyLength: 1, keys: ["source"]), Call(historyLength: 2, keys: ["log", "source"]),
      ])
      #expect(log.value == [1, 2])
      #expect(log.version == 2)
    }

    /// Alone it takes well under a second; the limit allows for sanitizers and for suites that keep the
    /// main actor busy meanwhile. A deadlock never finishes.
    @Test(.timeLimit(deadlockTimeLimit))
    func callbacksReadingTheStoreDoNotDeadlockWithWritersOnOtherThreads() async throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let reads = DeliveryRecorder<Int>()
      var failures: [String] = []
      let observer = count.observeForever(receiveCurrent: false) { value in
        do {
          _ = try count.history(limit: 5)
          _ = try count.value(at: count.version)
          _ = try store.keys()
          reads.record(value)
        } catch {
          failures.append("\(error)")
        }
      }
      defer { observer.cancel() }
      let errors = ErrorBox()
      let writers = RunningThreads(3) { _ in
        for _ in 0..<100 {
          do { try count.update { $0 += 1 } } catch { errors.record(error) }
        }
      }
      // Meanwhile the main actor also writes and reads.
      for _ in 0..<20 {
        try count.update { $0 += 1 }
        await Task.yield()
      }
      let done = await eventually(timeout: .seconds(30)) { writers.isFinished && count.value == 320 }
      #expect(done, "value \(count.value), writers finished: \(writers.isFinished)")
      #expect(errors.errors.isEmpty)
      #expect(failures.isEmpty)
      // Values are versions here: coalescing may skip some, never repeat one.
      let delivered = reads.takePending()
      #expect(!delivered.isEmpty)
      #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0 < $1 }, "\(delivered)")
      #expect(count.version == 320)
    }

    @Test func rollbackNotifiesWithTheRestoredContent() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let name = try store.liveData("name", default: "")
      try name.set("first")
      try name.set("second")
      let delivered = DeliveryRecorder<String>()
      let observer = name.observeForever(receiveCurrent: false, delivered.callback)
      defer { observer.cancel() }
      try name.rollback(to: 1)
      delivered.expect(["first"])
      #expect(name.version == 3)
    }

    @Test func rejectedRollbackNotifiesNobody() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let name = try store.liveData("name", default: "")
      try name.set("first")
      let delivered = DeliveryRecorder<String>()
      let observer = name.observeForever(receiveCurrent: false, delivered.callback)
      defer { observer.cancel() }
      expectStoreError("unknownVersion") { try name.rollback(to: 5) }
      delivered.expectNothing()
    }

    @Test func restoredValueIsDeliveredAsCurrentToNewObservers() throws {
      let folder = try TemporaryDirectory()
      do {
        let store = try PersistentStore(path: folder.path("store.db"))
        try store.liveData("name", default: "").set("persisted")
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"))
      let name = try store.liveData("name", default: "")
      let delivered = DeliveryRecorder<String>()
      let observer = name.observeForever(delivered.callback)
      defer { observer.cancel() }
      delivered.expect(["persisted"])
    }
  }
}

/// A weak reference a test task may set (written once, read after the task ended).
private final class WeakLiveData: @unchecked Sendable {
  weak var value: PersistentLiveData<Int>?
}
