import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// `store.write { }` and `data.write(_:)` (the group-commit section of PersistenceAndDurability): bodies run on the store's writer, calls that arrive
  /// together commit in one transaction, each call's writes commit or fail as a unit.
  @Suite struct GroupCommitTests {
    struct Refused: Error, Equatable {}

    /// Starts a call whose body holds the writer until `count` other calls wait behind it, so that those
    /// form the next group together (or `limit` passed); returns once the writer runs it.
    static func holdWriter(
      _ store: PersistentStore, untilWaiting count: Int, within limit: Duration = .seconds(20)
    ) async -> Task<Void, any Error> {
      let queue = store.database.groupCommit
      return await holdWriter(store, within: limit) { queue.pendingCount >= count }
    }

    /// Starts a call whose body holds the writer until `release` is true (`limit` at most); returns once
    /// the writer runs it.
    static func holdWriter(
      _ store: PersistentStore, within limit: Duration = .seconds(20),
      until release: @escaping @Sendable () -> Bool
    ) async -> Task<Void, any Error> {
      let running = Locked(false)
      let task = Task.detached {
        try await store.write {
          running.withLock { $0 = true }
          let deadline = ContinuousClock.now + limit
          while !release(), ContinuousClock.now < deadline { usleep(200) }
        }
      }
      _ = await eventually { running.withLock { $0 } }
      return task
    }

    /// Starts `body` as a call and waits until the writer's queue accepted it: calls started this way
    /// are queued in the order they were started.
    static func enqueue<T: Sendable>(
      _ store: PersistentStore, _ body: @escaping @Sendable () throws -> T
    ) async -> Task<T, any Error> {
      let queue = store.database.groupCommit
      func accepted() -> Int { queue.pendingCount + queue.statistics.calls }
      let before = accepted()
      let task = Task.detached { try await store.write(body) }
      _ = await eventually { accepted() > before }
      return task
    }

    @Test func writeReturnsAfterTheCommitWithMemoryMovedAndTheBodysResult() async throws {
      let folder = try TemporaryDirectory("group")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      let recorder = await MainActor.run { DeliveryRecorder<Int>() }
      let observer = await MainActor.run { count.observeForever(receiveCurrent: false, recorder.callback) }

      // Inside the body, as in a transaction, memory has not moved yet: it moves with the commit.
      let seenInside = try await store.write { () throws -> Int64 in
        try count.set(7)
        return count.version
      }
      try await count.write(8)

      #expect(seenInside == 0)
      #expect(count.value == 8 && count.version == 2)
      // Committed on disk: another connection reads it.
      #expect(try SQLiteCLI.query(path, "SELECT max(version) FROM pld_values WHERE key = 'count'") == "2")
      // Observers hear of it on the main actor, as for a set made off the main actor (coalescing).
      #expect(await eventually { !recorder.pending.isEmpty && count.version == 2 })
      let delivered = await MainActor.run { recorder.takePending() }
      #expect(delivered.last == 8 && Set(delivered).isSubset(of: [7, 8]))
      await MainActor.run { observer.cancel() }
    }

    @Test func concurrentWritersGetGapFreeVersionsAndShareCommits() async throws {
      let folder = try TemporaryDirectory("group")
      let store = try PersistentStore(path: folder.path("store.db"))
      let log = try store.liveData("log", default: 0)
      let counter = try store.liveData("counter", default: 0)
      let before = store.database.groupCommit.statistics
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<16 {
          group.addTask {
            for index in 0..<25 {
              try await log.write(writer * 1_000 + index)
              try await store.write { try counter.update { $0 += 1 } }
            }
          }
        }
        try await group.waitForAll()
      }
      let statistics = store.database.groupCommit.statistics
      let history = try log.history()
      #expect(history.map(\.version) == Array((1...400).reversed()))
      #expect(Set(history.map(\.value)).count == 400, "every write stored once")
      #expect(counter.value == 400 && counter.version == 400, "no lost update")
      #expect(statistics.calls - before.calls == 800)
      #expect(statistics.groups - before.groups < 800, "calls that arrived together shared a commit")
    }

    @Test func callsCommitInTheOrderTheWriterTookThem() async throws {
      let store = try PersistentStore.inMemory()
      let letters = try store.liveData("letters", default: "")
      let holder = await Self.holdWriter(store, untilWaiting: 3)
      var calls: [Task<Void, any Error>] = []
      for letter in ["a", "b", "c"] {
        calls.append(await Self.enqueue(store) { try letters.update { $0 += letter } })
      }
      try await holder.value
      for call in calls { try await call.value }
      #expect(try letters.history().reversed().map(\.value) == ["a", "ab", "abc"])
    }

    @Test func aThrowingBodyUndoesOnlyItsOwnWritesAndTheRestOfItsGroupCommits() async throws {
      let folder = try TemporaryDirectory("group")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let first = try store.liveData("first", default: 0)
      let failing = try store.liveData("failing", default: 0)
      let last = try store.liveData("last", default: 0)
      let holder = await Self.holdWriter(store, untilWaiting: 3)
      let before = store.database.groupCommit.statistics
      let a = await Self.enqueue(store) { try first.set(1) }
      let b = await Self.enqueue(store) { () throws -> Void in
        try failing.set(1)
        try first.set(99)
        throw Refused()
      }
      let c = await Self.enqueue(store) { try last.set(1) }
      try await holder.value
      try await a.value
      await #expect(throws: Refused.self) { try await b.value }
      try await c.value

      #expect(store.database.groupCommit.statistics.groups - before.groups == 1, "a, b and c: one group")
      #expect(first.value == 1 && first.version == 1)
      #expect(failing.version == 0 && failing.value == 0)
      #expect(last.value == 1 && last.version == 1)
      #expect(
        try SQLiteCLI.query(
          path, "SELECT group_concat(key || '=' || payload, ' ') FROM pld_values ORDER BY key")
          == "first=1 last=1")
    }

    /// `data.write(_:)` runs without a savepoint of its own: a write refused before its insert, or by
    /// its insert, must still change nothing and fail only its caller; the rest of its group commits.
    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func aValueWriteRefusedInItsGroupFailsOnlyItsCaller() async throws {
      let folder = try TemporaryDirectory("group")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let first = try store.liveData("first", default: 0)
      let exhausted = try store.liveData("exhausted", default: 0)
      let damaged = try store.liveData("damaged", default: 0)
      let last = try store.liveData("last", default: 0)
      // Another writer pushed one key to the end of the versions and left a damaged row under another:
      // the first is refused before its insert, the second by its insert (the CHECK on the version).
      try SQLiteCLI.execute(
        path,
        """
        PRAGMA ignore_check_constraints = ON;
        INSERT INTO pld_values (key, version, written_at, payload) VALUES
          ('exhausted', 9223372036854775807, 0, '1'), ('damaged', -5, 0, '1');
        """)
      let queue = store.database.groupCommit
      let holder = await Self.holdWriter(store, untilWaiting: 4)
      let before = queue.statistics
      // The holder lets the writer go once the four calls wait: they form its next group.
      let calls = [(first, 1), (exhausted, 2), (damaged, 3), (last, 4)].map { data, value in
        Task.detached { try await data.write(value) }
      }
      try await holder.value
      try await calls[0].value
      await #expect(throws: PersistentLiveDataError.self) { try await calls[1].value }
      await #expect(throws: PersistentLiveDataError.self) { try await calls[2].value }
      try await calls[3].value

      #expect(queue.statistics.groups - before.groups == 1, "the four calls: one group")
      #expect(first.value == 1 && first.version == 1)
      #expect(last.value == 4 && last.version == 1)
      #expect(exhausted.version == Int64.max, "where the other writer left it")
      #expect(damaged.version == 0 && damaged.value == 0, "memory did not move")
      #expect(
        try SQLiteCLI.query(
          path, "SELECT group_concat(key || '@' || version, ' ') FROM (SELECT * FROM pld_values ORDER BY key)"
        )
          == "damaged@-5 exhausted@9223372036854775807 first@1 last@1")

      // The group's heads are right: the next writes follow them.
      try await first.write(5)
      try await last.write(6)
      #expect(first.version == 2 && last.version == 2)
    }

    /// A value write whose prune fails takes its insert back with it, fails only its caller, and leaves
    /// the next write on the right version.
    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func aValueWriteWhosePruneFailsFailsOnlyItsCallerAndWritesNothing() async throws {
      let folder = try TemporaryDirectory("group")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let counter = try store.liveData("counter", default: 0, retention: .last(2))
      let other = try store.liveData("other", default: 0)
      for next in 1...15 { try await counter.write(next) }  // version 16 is due to prune
      // Another process makes every delete of a row fail.
      try SQLiteCLI.execute(
        path, "CREATE TRIGGER refuse BEFORE DELETE ON pld_values BEGIN SELECT RAISE(ABORT, 'refused'); END")
      let queue = store.database.groupCommit
      let holder = await Self.holdWriter(store, untilWaiting: 2)
      let before = queue.statistics
      let calls = [Task.detached { try await counter.write(16) }, Task.detached { try await other.write(1) }]
      try await holder.value
      await #expect(throws: PersistentLiveDataError.self) { try await calls[0].value }
      try await calls[1].value
      #expect(queue.statistics.groups - before.groups == 1, "both calls: one group")
      #expect(counter.version == 15 && counter.value == 15, "memory did not move")
      #expect(other.version == 1)
      #expect(try SQLiteCLI.query(path, "SELECT max(version) FROM pld_values WHERE key = 'counter'") == "15")

      try SQLiteCLI.execute(path, "DROP TRIGGER refuse")
      try await counter.write(16)
      #expect(counter.version == 16, "no version skipped")
      #expect(try counter.history().map(\.version) == [16, 15])
    }

    /// A value write that reaches a prune runs its insert and the prune in one savepoint of the group.
    @Test func valueWritesThatPruneKeepTheRetentionAndGapFreeVersions() async throws {
      let folder = try TemporaryDirectory("group")
      let store = try PersistentStore(path: folder.path("store.db"))
      let counter = try store.liveData("counter", default: 0, retention: .last(3))
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<4 {
          let other = try store.liveData("other-\(writer)", default: 0, retention: .last(2))
          group.addTask {
            for index in 1...40 {
              try await other.write(index)
              if writer == 0 { try await counter.write(index) }
            }
          }
        }
        try await group.waitForAll()
      }
      #expect(counter.version == 40)
      #expect(try counter.history().map(\.version) == [40, 39, 38])
      for writer in 0..<4 {
        let other = try store.liveData("other-\(writer)", default: 0, retention: .last(2))
        #expect(other.version == 40 && other.value == 40)
        #expect(try other.history().map(\.version) == [40, 39])
      }
    }

    @Test func cancellingAWaitingCallWithdrawsItAndWritesNothing() async throws {
      let store = try PersistentStore.inMemory()
      let value = try store.liveData("value", default: 0)
      let gate = Locked(false)
      let holder = await Self.holdWriter(store) { gate.withLock { $0 } }
      let withdrawn = await Self.enqueue(store) { try value.set(1) }
      withdrawn.cancel()
      await #expect(throws: CancellationError.self) { try await withdrawn.value }
      let kept = await Self.enqueue(store) { try value.set(2) }
      gate.withLock { $0 = true }
      try await holder.value
      try await kept.value
      #expect(try value.history().map(\.value) == [2])
    }

    @Test func closingWhileCallsWaitFailsThemWithStoreClosedAndLaterCallsToo() async throws {
      let store = try PersistentStore.inMemory()
      let value = try store.liveData("value", default: 0)
      let gate = Locked(false)
      let holder = await Self.holdWriter(store) { gate.withLock { $0 } }
      let queued = [
        await Self.enqueue(store) { try value.set(1) },
        await Self.enqueue(store) { try value.set(2) },
      ]
      // close() fails the waiting calls at once, then waits for the group the writer holds.
      let closer = Thread { try? store.close() }
      closer.start()
      for call in queued {
        await #expect(throws: PersistentLiveDataError.storeClosed(path: nil)) { try await call.value }
      }
      gate.withLock { $0 = true }
      try await holder.value
      await #expect(throws: PersistentLiveDataError.storeClosed(path: nil)) { try await value.write(3) }
      #expect(value.version == 0)
    }
  }
}
