import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// `set(_:ifVersion:)` (Conditional writes, in PersistenceAndDurability): the write happens only if the key is still at the named version in
  /// the file — decided inside the write transaction, never against memory.
  @Suite struct ConditionalWriteTests {
    /// A store that hears of other connections' writes only when asked: memory stays where this process
    /// left it, as in a process that has not yet noticed another's commit.
    static func deafStore(_ path: String) throws -> PersistentStore {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      options.watchesStoreFiles = false
      return try PersistentStore(path: path, options: options)
    }

    @Test func aWriteAtTheNamedVersionCommitsTheNextVersion() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("a.db"))
      let note = try store.liveData("note", default: "")
      try note.set("first", ifVersion: 0)
      try note.set("second", ifVersion: 1)
      #expect(note.value == "second" && note.version == 2)
      #expect(try note.history().map(\.version) == [2, 1])
    }

    @Test func anotherProcesssNewerVersionFailsTheConditionBeforeThisProcessHeardOfIt() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("shared.db")
      let store = try Self.deafStore(path)
      let counter = try store.liveData("counter", default: 0)
      try counter.set(1)

      let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "2"])
      #expect(child.readLine() == "ack 2")
      #expect(child.wait() == 0)
      #expect(counter.version == 1, "this process still shows version 1")

      #expect(throws: VersionConflict(key: "counter", expected: 1, actual: 2)) {
        try counter.set(10, ifVersion: 1)
      }
      #expect(counter.value == 1 && counter.version == 1, "nothing changed in memory")
      #expect(
        try SQLiteCLI.query(path, "SELECT group_concat(payload) FROM pld_values WHERE key = 'counter'")
          == "1,2",
        "nothing changed in the file")
      // Naming the version found writes.
      try counter.set(10, ifVersion: 2)
      #expect(counter.value == 10 && counter.version == 3)
    }

    @Test func theConflictIsThrownAsItselfAndNamesBothVersions() throws {
      let store = try PersistentStore.inMemory()
      let title = try store.liveData("todo/7", default: "")
      try title.set("a")
      do {
        try title.set("b", ifVersion: 5)
        Issue.record("a stale write committed")
      } catch let conflict as VersionConflict {
        #expect(conflict == VersionConflict(key: "todo/7", expected: 5, actual: 1))
        #expect(conflict.description.contains("todo/7") && conflict.description.contains("1"))
        #expect(conflict.description.contains("5"))
      }
    }

    @Test func versionZeroCreatesOnlyIfTheKeyHasNoVersionAlsoAfterARemoval() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("create.db"))
      let session = try store.liveData("session", default: "")
      try session.set("mine", ifVersion: 0)
      #expect(session.version == 1)
      #expect(throws: VersionConflict(key: "session", expected: 0, actual: 1)) {
        try session.set("theirs", ifVersion: 0)
      }
      #expect(session.value == "mine")

      try store.removeKey("session")
      #expect(session.version == 2, "the removal took version 2")
      #expect(throws: VersionConflict(key: "session", expected: 1, actual: 0), "a removed key has none") {
        try session.set("stale", ifVersion: 1)
      }
      try session.set("again", ifVersion: 0)
      #expect(session.value == "again" && session.version == 3, "numbers continue above the removal")
    }

    @Test func aConflictInsideATransactionCommitsNothingOfIt() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("transaction.db")
      let store = try PersistentStore(path: path)
      let balance = try store.liveData("balance", default: 100)
      let log = try store.liveData("log", default: [String]())
      try balance.set(90)

      #expect(throws: VersionConflict(key: "balance", expected: 0, actual: 1)) {
        try store.transaction {
          try log.set(["withdraw 10"])
          try balance.set(80, ifVersion: 0)
        }
      }
      #expect(log.version == 0 && balance.value == 90)
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values") == "1")
    }

    @Test func aConflictingWriteOfAGroupFailsAloneAndTheOthersCommit() async throws {
      let store = try PersistentStore.inMemory()
      let flag = try store.liveData("flag", default: false)
      let counter = try store.liveData("counter", default: 0)
      try flag.set(true)
      // The writer is held until all three wait, so that they form one group.
      let holder = await GroupCommitTests.holdWriter(store, untilWaiting: 3)
      let first = await GroupCommitTests.enqueue(store) { try counter.set(1) }
      let stale = await GroupCommitTests.enqueue(store) { try flag.set(false, ifVersion: 0) }
      let last = await GroupCommitTests.enqueue(store) { try counter.set(2) }
      try await holder.value
      try await first.value
      await #expect(throws: VersionConflict(key: "flag", expected: 0, actual: 1)) { try await stale.value }
      try await last.value
      #expect(counter.value == 2 && counter.version == 2)
      #expect(flag.value == true && flag.version == 1)
    }

    @Test func sixteenTasksDoingConditionalReadEditWriteLoopsLoseNoUpdate() async throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("loops.db"))
      let counter = try store.liveData("counter", default: 0)
      let successes = Locked(0)
      let conflicts = Locked(0)
      // Each task until it has written 25 times: 400 writes, however the tasks interleave.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<16 {
          group.addTask {
            var written = 0
            while written < 25 {
              let (value, version) = counter.snapshot
              do {
                try await store.write { try counter.set(value + 1, ifVersion: version) }
                written += 1
              } catch is VersionConflict {
                conflicts.withLock { $0 += 1 }
              }
            }
            successes.withLock { [written] in $0 += written }
          }
        }
        try await group.waitForAll()
      }
      let written = successes.withLock { $0 }
      try #require(written == 400, "\(conflicts.withLock { $0 }) conflicts")
      #expect(counter.value == written, "the counter equals the successful writes: no lost update")
      #expect(try counter.history().map(\.version) == Array((1...Int64(written)).reversed()), "gap-free")
    }

    @Test func fourProcessesDoingConditionalLoopsLoseNoUpdate() async throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("processes.db")
      try PersistentStore(path: path).close()
      let children = try (0..<4).map { _ in
        try ChildProcess(ChildProcess.testChildPath, ["cas", path, "counter", "25"])
      }
      var written = 0
      var conflicts = 0
      for child in children {
        let parts = (child.readLine() ?? "").split(separator: " ")
        #expect(parts.first == "cas", "child said \(parts)")
        written += parts.count == 3 ? Int(parts[1]) ?? 0 : 0
        conflicts += parts.count == 3 ? Int(parts[2]) ?? 0 : 0
        #expect(await child.waitOffPool() == 0)
      }
      let store = try PersistentStore(path: path)
      let counter = try store.liveData("counter", default: 0)
      try #require(written == 100)
      #expect(counter.value == written, "\(written) writes, \(conflicts) conflicts")
      #expect(try counter.history().map(\.version) == Array((1...Int64(written)).reversed()))
    }
  }
}
