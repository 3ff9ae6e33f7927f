import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataTesting
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// `SharedCollection` and `PostgresStore.keys(prefix:)` / `removeKey` against a real server:
/// members are ordinary keys, every replica's collection follows every other's changes, and
/// `changes(since:)` delivers every version once from a checkpoint that another replica can resume.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedCollectionTests {
  struct Todo: Codable, Sendable, Equatable {
    var title: String
    var done = false
  }

  @Test func aMemberIsAnOrdinaryKeyBothWays() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let todos = try await a.store.collection("todo", of: Todo.self)
    try await todos.set(Todo(title: "milk"), for: "7")
    try await todos.set(Todo(title: "nested"), for: "a/b")
    // The member's key, its live value and the server's row.
    let seven = try await a.store.liveData("todo/7", default: Todo(title: ""))
    #expect(seven.value == Todo(title: "milk") && seven.version == 1)
    #expect(try await todos.member("7", default: Todo(title: "")) === seven)
    #expect(
      try await fixture.psql("SELECT key FROM pld_heads ORDER BY key COLLATE \"C\"") == "todo/7\ntodo/a/b")
    // A write of the key reaches the collection, and a write of the member its live value.
    try await seven.set(Todo(title: "milk", done: true))
    #expect(todos["7"] == Todo(title: "milk", done: true))
    try await todos.set(Todo(title: "oat milk"), for: "7")
    #expect(seven.value == Todo(title: "oat milk") && seven.version == 3)
    #expect(todos.ids == ["7", "a/b"])
    #expect(todos["a/b"] == Todo(title: "nested"))
    // History and rollback of a member are those of its key.
    try await seven.rollback(to: 1)
    #expect(todos["7"] == Todo(title: "milk") && todos.memberVersion(of: "7") == 4)
    await a.shutDown()
  }

  @Test func keysWithAPrefixAreInByteOrderAndLeaveTheRestOut() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    for key in ["todo/b", "todo/a", "todo/É", "todo/z", "todos", "todo", "tod", "other/x", "todo/é"] {
      try await a.store.liveData(key, default: 0).set(1)
    }
    // UTF-8 byte order: "É" (C3 89) before "é" (C3 A9), both after "z"; `todos` is not under `todo/`.
    #expect(try await a.store.keys(prefix: "todo/") == ["todo/a", "todo/b", "todo/z", "todo/É", "todo/é"])
    #expect(
      try await a.store.keys(prefix: "todo") == [
        "todo", "todo/a", "todo/b", "todo/z", "todo/É", "todo/é", "todos",
      ])
    #expect(try await a.store.keys(prefix: "nothing/") == [])
    #expect(try await a.store.keys(prefix: "").count == 9)
    #expect(try await a.store.keys() == (try await a.store.keys(prefix: "")))
    let todos = try await a.store.collection("todo", of: Int.self)
    #expect(todos.value == ["a": 1, "b": 1, "z": 1, "É": 1, "é": 1])
    await a.shutDown()
  }

  @Test func longKeysAndPrefixesLongerThanTheIndexedPartAreExact() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    // Every key shares its first 300 characters: the index narrows nothing, starts_with decides.
    let stem = String(repeating: "ж", count: 300)
    let name = stem + "/long"
    let todos = try await a.store.collection(name, of: Int.self)
    let longID = String(repeating: "x", count: 20_000)
    try await todos.set(1, for: longID)
    try await todos.set(2, for: "short")
    try await a.store.liveData(stem + "/longer/x", default: 0).set(3)
    try await a.store.liveData(stem + "/lon", default: 0).set(4)
    #expect(try await a.store.keys(prefix: name + "/") == [name + "/short", name + "/" + longID])
    let reopened = try await fixture.replica(listening: false).store.collection(name, of: Int.self)
    #expect(reopened.value == [longID: 1, "short": 2])
    await a.shutDown()
  }

  @Test func aRemovedMemberLeavesKeysAndItsNumbersAreNeverReused() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let todos = try await a.store.collection("todo", of: Todo.self)
    try await todos.set(Todo(title: "milk"), for: "milk")
    try await todos.set(Todo(title: "milk", done: true), for: "milk")
    let milk = try await todos.member("milk", default: Todo(title: "none"))
    try await WriteAttribution.$current.withValue(WriteAttribution(author: "ada", reason: "bought")) {
      try await todos.remove("milk")
    }
    #expect(todos["milk"] == nil && todos.memberVersion(of: "milk") == 3)
    #expect(milk.value == Todo(title: "none") && milk.version == 3, "the live value is back to its default")
    #expect(try await a.store.keys(prefix: "todo/") == [])
    #expect(try await a.store.keys() == [])
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "0")
    #expect(
      try await fixture.psql("SELECT version || ' ' || author || ' ' || reason FROM pld_removals")
        == "3 ada bought")
    // Removing again changes nothing; writing again continues above the removal.
    try await todos.remove("milk")
    try await todos.set(Todo(title: "milk again"), for: "milk")
    #expect(todos.memberVersion(of: "milk") == 4 && milk.version == 4)
    #expect(try await fixture.psql("SELECT version FROM pld_values") == "4")
    // A live value opened after a removal starts at the removal's version: update goes on above it.
    try await a.store.removeKey("todo/milk")
    let reopened = try await fixture.replica(listening: false).store.liveData(
      "todo/milk", default: Todo(title: "d"))
    #expect(reopened.version == 5 && reopened.value == Todo(title: "d"))
    try await reopened.update { $0.done = true }
    #expect(reopened.version == 6)
    await a.shutDown()
  }

  @MainActor
  @Test func anotherReplicasWritesAndRemovalsReachTheCollectionAndItsObservers() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.collection("todo", of: Todo.self)
    let seen = Locked<[[String: Todo]]>([])
    let observer = onA.observeForever(receiveCurrent: false) { members in seen.withLock { $0.append(members) }
    }
    let onB = try await b.store.collection("todo", of: Todo.self)
    try await onB.set(Todo(title: "milk"), for: "milk")
    try await b.store.liveData("todo/bread", default: Todo(title: "")).set(Todo(title: "bread"))
    #expect(await eventually { onA.value.count == 2 })
    try await onB.remove("milk")
    #expect(await eventually { onA.value == ["bread": Todo(title: "bread")] })
    #expect(onA.memberVersion(of: "milk") == 2)
    // A key outside the collection moves nothing.
    try await b.store.liveData("todos", default: 0).set(1)
    try await onB.set(Todo(title: "eggs"), for: "eggs")
    #expect(await eventually { onA["eggs"] != nil })
    #expect(seen.withLock { $0 }.last == onA.value)
    #expect(
      seen.withLock { $0 }.allSatisfy { $0.keys.allSatisfy { ["milk", "bread", "eggs"].contains($0) } })
    observer.cancel()
    await a.shutDown()
    await b.shutDown()
  }

  @Test func aChangeWhoseNotificationIsLostArrivesThroughTheCatchUp() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(200)
    let a = fixture.replica(options: options)
    let todos = try await a.store.collection("todo", of: Int.self)
    // Written by hand, as a writer that died before it notified: only the catch-up can find it.
    let hash = try await fixture.psql("SELECT encode(sha256('todo/x'::bytea), 'hex')")
    try await fixture.psql(
      """
      INSERT INTO pld_heads VALUES ('\(hash)', 'todo/x', 1);
      INSERT INTO pld_values (key_hash, version, payload) VALUES ('\(hash)', 1, '42')
      """)
    #expect(await eventually { todos["x"] == 42 })
    await a.shutDown()
  }

  @Test func aMemberTooLongForANotificationArrivesThroughTheCatchUp() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(200)
    let a = fixture.replica(options: options)
    let b = fixture.replica()
    let onA = try await a.store.collection("docs", of: Int.self)
    // Notified by its hash only (over 7,900 bytes), which replica a never saw: the catch-up reads keys.
    let long = String(repeating: "p", count: 9_000)
    try await b.store.collection("docs", of: Int.self).set(7, for: long)
    #expect(await eventually { onA[long] == 7 })
    await a.shutDown()
    await b.shutDown()
  }

  @Test func aKilledListenerLosesNoMemberChange() async throws {
    let fixture = try await SharedFixture()
    // No periodic catch-up within the test: only the new session's look can bring what it missed.
    var options = PostgresStoreOptions()
    options.catchUpInterval = .seconds(600)
    let a = fixture.replica(options: options)
    let b = fixture.replica(listening: false)
    // A listens before the collection opens: its first session asked for no look, so the one that the
    // new session asks for is A's first (which compares live keys, and must read collections too).
    try await Listeners.expectListening([a], fixture, "a listens")
    let onA = try await a.store.collection("todo", of: Int.self)
    let onB = try await b.store.collection("todo", of: Int.self)
    let reader = onA.changes(since: nil)
    try await onB.set(1, for: "before")
    #expect(try await reader.next(1, timeout: .seconds(60)).map(\.id) == ["before"])
    // The listener's backend is killed; members change while A reconnects, their notifications lost.
    let killed = try await Listeners.pids(fixture)
    try await fixture.psql(
      """
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'pld-listener'
      """)
    for index in 0..<5 { try await onB.set(index, for: "during-\(index)") }
    try await onB.remove("before")
    #expect(
      try await eventually {
        let listening = try await Listeners.pids(fixture)
        return !listening.isEmpty && listening.isDisjoint(with: killed)
      }, "a new session listens")
    #expect(
      await eventually { onA.value == Dictionary(uniqueKeysWithValues: (0..<5).map { ("during-\($0)", $0) }) }
    )
    let after = try await reader.next(6, timeout: .seconds(60))
    #expect(
      Set(after.map { "\($0.id)@\($0.version)" }) == Set((0..<5).map { "during-\($0)@1" } + ["before@2"]))
    await a.shutDown()
    await b.shutDown()
  }

  @MainActor
  @Test func aTransactionOfMembersAndAPlainKeyIsOneCollectionVersion() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let todos = try await a.store.collection("todo", of: Todo.self)
    let count = try await a.store.liveData("todo-count", default: 0)
    var delivered: [[String: Todo]] = []
    let observer = todos.observeForever(receiveCurrent: false) { delivered.append($0) }
    let before = todos.version
    try await a.store.transaction { transaction in
      try transaction.set(Todo(title: "milk"), for: "milk", in: todos)
      try transaction.set(Todo(title: "bread"), for: "bread", in: todos)
      try transaction.set(count, to: 2)
    }
    #expect(todos.version == before + 1)
    #expect(delivered == [["milk": Todo(title: "milk"), "bread": Todo(title: "bread")]])
    #expect(count.value == 2)
    // Observers on the main actor were called before set, update and remove returned.
    try await todos.set(Todo(title: "eggs"), for: "eggs")
    #expect(delivered.last?["eggs"] == Todo(title: "eggs"))
    try await todos.update("eggs", default: Todo(title: "")) { $0.done = true }
    #expect(delivered.last?["eggs"]?.done == true)
    try await todos.remove("eggs")
    #expect(delivered.last?["eggs"] == nil && delivered.count == 4)
    observer.cancel()
    await a.shutDown()
  }

  @Test func updateOfAMemberLosesNoUpdateAcrossReplicas() async throws {
    let fixture = try await SharedFixture()
    let replicas = (0..<3).map { _ in fixture.replica(listening: false) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for replica in replicas {
        let counters = try await replica.store.collection("counters", of: Int.self)
        group.addTask {
          for _ in 0..<10 { try await counters.update("hits", default: 0) { $0 += 1 } }
        }
      }
      try await group.waitForAll()
    }
    let fresh = try await fixture.replica(listening: false).store.collection("counters", of: Int.self)
    #expect(fresh["hits"] == 30 && fresh.memberVersion(of: "hits") == 30)
  }

  @Test func anUndecodableMemberFollowsTheDecodePolicy() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(listening: false)
    let raw = try await a.store.collection("todo", of: String.self)
    try await raw.set("not a todo", for: "bad")
    try await a.store.liveData("todo/good", default: Todo(title: "")).set(Todo(title: "good"))
    do {
      _ = try await fixture.replica(listening: false).store.collection("todo", of: Todo.self)
      Issue.record("the open did not throw")
    } catch let PersistentLiveDataError.undecodable(key, version, _) {
      #expect(key == "todo/bad" && version == 1)
    }
    let lenient = fixture.replica(options: PostgresStoreOptions(onUndecodable: .useDefault), listening: false)
    let todos = try await lenient.store.collection("todo", of: Todo.self)
    #expect(todos.value == ["good": Todo(title: "good")])
    #expect(todos.memberVersion(of: "bad") == 1, "left out, its version known")
    // Asked again with another type: the same name is another collection's.
    await #expect(throws: PersistentLiveDataError.self) {
      try await lenient.store.collection("todo", of: Int.self)
    }
  }

  @Test func changesFromNilDeliverTheMembersThenEveryLaterVersionAndRemoval() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.collection("todo", of: Int.self)
    for (id, value) in [("b", 2), ("a", 1), ("c", 3)] { try await onA.set(value, for: id) }
    try await onA.set(11, for: "a")
    let onB = try await b.store.collection("todo", of: Int.self)
    let stream = onB.changes(since: nil)
    let first = try await stream.next(3, timeout: .seconds(60)).map {
      "\($0.id)@\($0.version)=\($0.value ?? -1)"
    }
    #expect(first == ["a@2=11", "b@1=2", "c@1=3"])
    try await onA.set(12, for: "a")
    try await WriteAttribution.$current.withValue(WriteAttribution(author: "ops")) {
      try await onA.remove("b")
    }
    try await onA.set(4, for: "d")
    let changes = try await stream.next(3, timeout: .seconds(60))
    let later = changes.map { "\($0.id)@\($0.version)=\($0.value.map(String.init) ?? "nil")" }
    let removal = changes.first { $0.value == nil }
    #expect(Set(later) == ["a@3=12", "b@2=nil", "d@1=4"])
    #expect(removal?.attribution?.author == "ops")
    await a.shutDown()
    await b.shutDown()
  }

  @Test func aCheckpointResumesInAnotherReplicaWithEachVersionExactlyOnce() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let todos = try await a.store.collection("todo", of: Int.self)
    for index in 0..<5 { try await todos.set(index, for: "m\(index)") }
    // Stopped in the middle of the first listing; saved as JSON, as an app would.
    let firstTwo = try await todos.changes(since: nil).next(2, timeout: .seconds(60))
    var delivered = firstTwo.map { "\($0.id)@\($0.version)" }
    let saved = try JSONEncoder().encode(try #require(firstTwo.last).checkpoint)
    for index in 0..<5 { try await todos.set(index * 10, for: "m\(index)") }
    try await todos.remove("m4")
    let b = fixture.replica()
    let resumed = try JSONDecoder().decode(CollectionCheckpoint.self, from: saved)
    let onB = try await b.store.collection("todo", of: Int.self).changes(since: resumed)
    // The 3 members still to list as they were (m4's version 1 was deleted by its removal: skipped),
    // then what came after the listing's snapshot: 4 writes (m4's second version deleted too), the removal.
    delivered += try await onB.next(7, timeout: .seconds(60)).map { "\($0.id)@\($0.version)" }
    #expect(delivered.count == Set(delivered).count, "nothing twice: \(delivered)")
    #expect(
      Set(delivered) == ["m0@1", "m1@1", "m2@1", "m3@1", "m0@2", "m1@2", "m2@2", "m3@2", "m4@3"],
      "\(delivered)")
    // Nothing more: the next change is the next write.
    try await todos.set(99, for: "m9")
    #expect(try await onB.next(1, timeout: .seconds(60)).map(\.id) == ["m9"])
    await a.shutDown()
    await b.shutDown()
  }

  /// Concurrent transactions commit out of id order: a reader that stops and resumes from its
  /// checkpoints after every few changes still gets every version of every member, once, in order.
  @Test func concurrentWritersAndARestartingReaderMissNothing() async throws {
    let fixture = try await SharedFixture()
    let writers = (0..<4).map { _ in fixture.replica(listening: false) }
    let reader = fixture.replica()
    // The reader's first checkpoint comes before any write: `changes(since: nil)` lists each member's
    // latest version only, so a reader that started after the writers would rightly miss their first ones.
    let marked = try await reader.store.collection("todo", of: Int.self)
    try await marked.set(0, for: "start")
    var checkpoint: CollectionCheckpoint? = try #require(
      try await marked.changes(since: nil).next(1, timeout: .seconds(120)).first
    ).checkpoint
    let perWriter = 25
    let writing = Task {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for (index, writer) in writers.enumerated() {
          let todos = try await writer.store.collection("todo", of: Int.self)
          group.addTask {
            for step in 1...perWriter {
              // Two writers share each member: its versions interleave between them.
              try await todos.update("m\(index / 2)-\(step % 3)", default: 0) { $0 += 1 }
            }
          }
        }
        try await group.waitForAll()
      }
    }
    var delivered: [String: [Int64]] = [:]
    var total = 0
    let expected = writers.count * perWriter
    while total < expected {
      // A new sequence (as after a restart) every 7 changes.
      let todos = try await reader.store.collection("todo", of: Int.self)
      for change in try await todos.changes(since: checkpoint).next(
        min(7, expected - total), timeout: .seconds(120))
      {
        delivered[change.id, default: []].append(change.version)
        checkpoint = change.checkpoint
        total += 1
      }
    }
    try await writing.value
    for (id, versions) in delivered {
      #expect(versions == Array(1...Int64(versions.count)), "\(id): \(versions)")
    }
    #expect(delivered.values.map(\.count).reduce(0, +) == expected)
    for writer in writers { await writer.shutDown() }
    await reader.shutDown()
  }

  @Test func aCheckpointOfAnotherKindOfStoreOrAheadOfTheServerIsRefused() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(listening: false)
    let todos = try await a.store.collection("todo", of: Int.self)
    let sqlite = CollectionCheckpoint(position: 3, after: nil)
    await #expect(throws: PersistentLiveDataError.unknownVersion(key: "todo", version: 3)) {
      _ = try await todos.changes(since: sqlite).next(1, timeout: .seconds(60))
    }
    let ahead = CollectionCheckpoint(position: 0, after: nil, snapshot: "999999999:999999999:")
    await #expect(throws: PersistentLiveDataError.unknownVersion(key: "todo", version: 0)) {
      _ = try await todos.changes(since: ahead).next(1, timeout: .seconds(60))
    }
    let damaged = CollectionCheckpoint(position: 0, after: nil, snapshot: "1:2:x'; DROP TABLE pld_heads; --")
    await #expect(throws: PersistentLiveDataError.unknownVersion(key: "todo", version: 0)) {
      _ = try await todos.changes(since: damaged).next(1, timeout: .seconds(60))
    }
    #expect(try await fixture.psql("SELECT count(*) FROM pld_heads") == "0")
  }

  @Test func runBuildsThePrefixIndexConcurrentlyAndRebuildsAnInvalidOne() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let index = "SELECT indisvalid FROM pg_index WHERE indexrelid = 'pld_heads_key_prefix'::regclass"
    #expect(await eventually { (try? await fixture.psql(index)) == "t" })
    // The planner serves a prefix from it (with sequential scans off, as on a large table).
    let plan = try await fixture.psql(
      """
      SET enable_seqscan = off;
      EXPLAIN SELECT key FROM pld_heads h WHERE left(h.key, 256) COLLATE "C" >= 'todo/'
        AND left(h.key, 256) COLLATE "C" < 'todo0' AND starts_with(h.key, 'todo/')
      """)
    #expect(plan.contains("pld_heads_key_prefix"), "\(plan)")
    await a.shutDown()
    // An interrupted build leaves the index invalid: the next run builds it again.
    try await fixture.psql(
      "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'pld_heads_key_prefix'::regclass")
    let client = PostgresClient(configuration: fixture.configuration)
    let running = Task { await client.run() }
    #expect(
      try await SharedSchema.buildConcurrentIndexes(client: client, logger: nil) == ["pld_heads_key_prefix"])
    #expect(try await fixture.psql(index) == "t")
    #expect(try await SharedSchema.buildConcurrentIndexes(client: client, logger: nil) == [])
    running.cancel()
    await running.value
  }
}
