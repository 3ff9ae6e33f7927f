import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgresTesting
import Testing

@testable import PersistentLiveDataPostgres

/// The §5 rules across replicas, against a real PostgreSQL server: each replica is its own client and
/// store on one database.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedStoreTests {
  @Test func aWriteOnOneReplicaReachesTheOther() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("greeting", default: "none")
    let onB = try await b.store.liveData("greeting", default: "none")
    #expect(onA.version == 0)
    #expect(onB.value == "none")
    try await onA.set("hello")
    #expect(onA.version == 1)
    #expect(onA.value == "hello")
    #expect(await eventually { onB.version == 1 })
    #expect(onB.value == "hello")
    try await onB.set("back")
    #expect(onB.version == 2)
    #expect(await eventually { onA.version == 2 })
    #expect(onA.value == "back")
    await a.shutDown()
    await b.shutDown()
  }

  @Test func versionsAreGapFreeWhicheverReplicaWritesAndSurviveANewReplica() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("counter", default: 0)
    let onB = try await b.store.liveData("counter", default: 0)
    for round in 1...10 {
      let writer = round.isMultiple(of: 2) ? onB : onA
      try await writer.set(round)
    }
    let versions = try await onA.history().map(\.version)
    #expect(versions == Array((1...10).reversed()))
    #expect(try await onB.history(limit: 3).map(\.value) == [10, 9, 8])
    // A replica that starts later restores the latest version.
    let c = fixture.replica()
    let onC = try await c.store.liveData("counter", default: 0)
    #expect(onC.version == 10)
    #expect(onC.value == 10)
    #expect(try await c.store.keys() == ["counter"])
    for replica in [a, b, c] { await replica.shutDown() }
  }

  @MainActor
  @Test func setReturnsAfterTheCommitWithMemoryAndObserversUpdated() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("theme", default: "light")
    var delivered: [String] = []
    let observer = data.observeForever(receiveCurrent: false) { delivered.append($0) }
    try await data.set("dark")
    // On the main actor, observers were called before set returned; the row is on the server.
    #expect(delivered == ["dark"])
    #expect(try await fixture.psql("SELECT payload FROM pld_values WHERE version = 1") == "\"dark\"")
    observer.cancel()
    await a.shutDown()
  }

  @Test func aSetThatThrowsChangesNothing() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("number", default: 1.0)
    try await data.set(2.0)
    // JSON has no infinity: encoding fails before anything is sent.
    await #expect(throws: PersistentLiveDataError.self) { try await data.set(.infinity) }
    #expect(data.value == 2.0)
    #expect(data.version == 1)
    try await data.set(3.0)
    #expect(data.version == 2)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "2")
    await a.shutDown()
  }

  @Test func oneInstancePerKeyAndATypeConflictThrows() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let first = try await a.store.liveData("shared", default: 0)
    let second = try await a.store.liveData("shared", default: 5)
    #expect(first === second)
    await #expect(throws: PersistentLiveDataError.self) {
      _ = try await a.store.liveData("shared", default: "text")
    }
    await #expect(throws: PersistentLiveDataError.self) { _ = try await a.store.liveData("", default: 0) }
    await #expect(throws: PersistentLiveDataError.self) {
      _ = try await a.store.liveData("a\u{0}b", default: 0)
    }
    await a.shutDown()
  }

  @Test func historyValueAtAndRollback() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let data = try await a.store.liveData("doc", default: "")
    for text in ["one", "two", "three"] { try await data.set(text) }
    #expect(try await data.value(at: 2) == "two")
    #expect(try await data.value(at: 9) == nil)
    try await data.rollback(to: 1)
    #expect(data.version == 4)
    #expect(data.value == "one")
    await #expect(throws: PersistentLiveDataError.self) { try await data.rollback(to: 42) }
    #expect(data.version == 4)
    let onB = try await b.store.liveData("doc", default: "")
    #expect(onB.value == "one")
    #expect(try await onB.history().map(\.value) == ["one", "three", "two", "one"])
    await a.shutDown()
    await b.shutDown()
  }

  @Test func changesDeliverEveryVersionFromAnotherReplicaInOrder() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("events", default: 0)
    let onB = try await b.store.liveData("events", default: 0)
    try await onA.set(1)
    let reader = Task {
      var seen: [Int64] = []
      for try await change in onB.changes(since: 0) {
        #expect(change.value == Int(change.version))
        seen.append(change.version)
        if seen.count == 60 { break }
      }
      return seen
    }
    for value in 2...60 { try await onA.set(value) }
    let seen = try await reader.value
    #expect(seen == Array(1...60))
    await a.shutDown()
    await b.shutDown()
  }

  @Test func retentionKeepsTheLastVersionsAndChangesReportWhatWasPruned() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: PostgresStoreOptions(retention: .last(3)))
    let data = try await a.store.liveData("kept", default: 0)
    for value in 1...8 { try await data.set(value) }
    #expect(try await data.history().map(\.version) == [8, 7, 6])
    #expect(try await data.value(at: 2) == nil)
    await #expect(throws: PersistentLiveDataError.self) { try await data.rollback(to: 2) }
    var iterator = data.changes(since: 1).makeAsyncIterator()
    do {
      _ = try await iterator.next()
      Issue.record("versions 2…5 were pruned: changes(since: 1) must say so")
    } catch let error as PersistentLiveDataError {
      guard case .changesPruned(_, 1, 6) = error else {
        Issue.record("unexpected \(error)")
        return
      }
    }
    // since: 0 is the whole kept history, from the oldest version kept.
    var everything = data.changes(since: 0).makeAsyncIterator()
    #expect(try await everything.next()?.version == 6)
    // A position newer than the server holds (another database's, an older backup's) is refused.
    var ahead = data.changes(since: 12).makeAsyncIterator()
    await #expect(throws: PersistentLiveDataError.unknownVersion(key: "kept", version: 12)) {
      _ = try await ahead.next()
    }
    try await data.set(9)
    #expect(data.version == 9)
    await a.shutDown()
  }

  @Test func aTransactionCommitsEveryKeyOrNone() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let limits = try await a.store.liveData("limits", default: 10)
    let flags = try await a.store.liveData("flags", default: [String]())
    let limitsOnB = try await b.store.liveData("limits", default: 10)
    let flagsOnB = try await b.store.liveData("flags", default: [String]())
    try await a.store.transaction { transaction in
      try transaction.set(limits, to: 20)
      try transaction.set(flags, to: ["throttle"])
      try transaction.set(limits, to: 30)
    }
    #expect(limits.value == 30)
    #expect(limits.version == 2)
    #expect(flags.version == 1)
    #expect(await eventually { limitsOnB.version == 2 && flagsOnB.version == 1 })
    #expect(limitsOnB.value == 30)
    #expect(flagsOnB.value == ["throttle"])

    struct Refused: Error {}
    await #expect(throws: Refused.self) {
      try await a.store.transaction { transaction in
        try transaction.set(limits, to: 99)
        throw Refused()
      }
    }
    // A write of the transaction that the server refuses rolls back the others.
    let other = fixture.replica()
    let foreign = try await other.store.liveData("limits", default: 0)
    await #expect(throws: SharedStoreError.self) {
      try await a.store.transaction { transaction in try transaction.set(foreign, to: 1) }
    }
    #expect(limits.value == 30)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "3")
    for replica in [a, b, other] { await replica.shutDown() }
  }

  @Test func updateRetriesWhenAnotherReplicaWroteFirst() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica(listening: false)
    let onA = try await a.store.liveData("tally", default: 0)
    // B does not listen, so it knows nothing of A's writes when it updates: its first attempt must lose
    // and run again.
    let onB = try await b.store.liveData("tally", default: 0)
    try await onA.set(5)
    try await onA.set(6)
    let attempts = Locked(0)
    let written = try await onB.update { value in
      attempts.withLock { $0 += 1 }
      value += 1
    }
    #expect(written == 7)
    #expect(onB.version == 3)
    #expect(attempts.withLock { $0 } == 2)
    await a.shutDown()
    await b.shutDown()
  }

  @Test func replicasStartingTogetherApplyTheSchemaOnce() async throws {
    let fixture = try await SharedFixture()
    // "Once", not how fast: see SharedFailureTests.sixReplicasStartingTogetherApplyTheSchemaOnce.
    var patient = PostgresStoreOptions()
    patient.operationTimeout = .seconds(60)
    let replicas = (0..<6).map { _ in fixture.replica(options: patient) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, replica) in replicas.enumerated() {
        group.addTask { _ = try await replica.store.liveData("key-\(index)", default: index) }
      }
      try await group.waitForAll()
    }
    #expect(
      try await fixture.psql("SELECT count(*) FROM pld_schema") == "\(SharedSchema.current)",
      "each migration once")
    #expect(replicas.allSatisfy { $0.isRunning })
    for replica in replicas { await replica.shutDown() }
  }
}

/// Keys of a shared store are told apart by their bytes, on every replica, as PostgreSQL tells them apart.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedKeyIdentityTests {
  @Test func canonicallyEquivalentSpellingsAreDifferentKeysOnEveryReplica() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let pairs = [
      ("caf\u{E9}", "cafe\u{301}"), ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"),
      ("a\u{323}\u{307}", "a\u{307}\u{323}"),
    ]
    for (first, second) in pairs {
      #expect(first == second, "Swift calls the two spellings equal")
      let firstOnA = try await a.store.liveData(first, default: 0)
      let secondOnA = try await a.store.liveData(second, default: 0)
      #expect(firstOnA !== secondOnA)
      let secondOnB = try await b.store.liveData(second, default: 0)
      let firstOnB = try await b.store.liveData(first, default: 0)
      try await firstOnA.set(1)
      try await secondOnB.set(10)
      try await secondOnA.set(11)
      #expect(firstOnA.version == 1 && secondOnA.version == 2, "the second spelling starts at 1")
      #expect(await eventually { firstOnB.version == 1 && secondOnB.version == 2 })
      #expect(firstOnB.value == 1 && secondOnB.value == 11)
      #expect(await eventually { secondOnA.version == 2 } && secondOnA.value == 11)
      #expect(try await firstOnB.history().map(\.version) == [1])
      #expect(try await secondOnA.history().map(\.version) == [2, 1])
    }
    let keys = try await a.store.keys()
    #expect(keys.count == 6)
    #expect(Set(keys.map(StoreKey.init)).count == 6)
    await a.shutDown()
    await b.shutDown()
  }
}
