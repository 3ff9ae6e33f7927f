import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataPostgres

/// `SharedLiveData.set(_:ifVersion:)` and `SharedTransaction.set(_:to:ifVersion:)` (Conditional writes, in PersistenceAndDurability): decided
/// by the write's own statement on the server, never against this replica's memory.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedConditionalWriteTests {
  @Test func anotherReplicasNewerVersionFailsTheConditionEvenBeforeThisReplicaHeardOfIt() async throws {
    let fixture = try await SharedFixture()
    // A replica that does not listen hears of nothing another replica writes.
    let a = fixture.replica(listening: false)
    let b = fixture.replica()
    let onA = try await a.store.liveData("counter", default: 0)
    try await onA.set(1)
    try await b.store.liveData("counter", default: 0).set(2)
    #expect(onA.version == 1, "replica a still shows version 1")

    await #expect(throws: VersionConflict(key: "counter", expected: 1, actual: 2)) {
      try await onA.set(10, ifVersion: 1)
    }
    #expect(onA.value == 1 && onA.version == 1, "nothing changed in memory")
    #expect(
      try await fixture.psql("SELECT string_agg(payload, ',' ORDER BY version) FROM pld_values") == "1,2")
    try await onA.set(10, ifVersion: 2)
    #expect(onA.value == 10 && onA.version == 3)
    await a.shutDown()
    await b.shutDown()
  }

  @Test func versionZeroCreatesOnlyIfTheKeyWasNeverWritten() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let lock = try await a.store.liveData("lock", default: "")
    try await lock.set("mine", ifVersion: 0)
    #expect(lock.version == 1)
    await #expect(throws: VersionConflict(key: "lock", expected: 0, actual: 1)) {
      try await lock.set("theirs", ifVersion: 0)
    }
    #expect(lock.value == "mine")
    await a.shutDown()
  }

  @Test func aConflictInsideATransactionCommitsNothingOfIt() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let balance = try await a.store.liveData("balance", default: 100)
    let log = try await a.store.liveData("log", default: [String]())
    try await balance.set(90)
    await #expect(throws: VersionConflict(key: "balance", expected: 0, actual: 1)) {
      try await a.store.transaction { transaction in
        try transaction.set(log, to: ["withdraw 10"])
        try transaction.set(balance, to: 80, ifVersion: 0)
      }
    }
    #expect(log.version == 0 && balance.value == 90)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "1")
    try await a.store.transaction { transaction in
      try transaction.set(log, to: ["withdraw 10"])
      try transaction.set(balance, to: 80, ifVersion: 1)
    }
    #expect(log.version == 1 && balance.value == 80 && balance.version == 2)
    await a.shutDown()
  }

  @Test func conditionalLoopsOnFourReplicasLoseNoUpdate() async throws {
    let fixture = try await SharedFixture()
    let replicas = (0..<4).map { _ in fixture.replica(listening: false) }
    let successes = Locked(0)
    // Each task until it has written 5 times: 40 writes, however the tasks interleave.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for replica in replicas {
        let counter = try await replica.store.liveData("counter", default: 0)
        for _ in 0..<2 {
          group.addTask {
            var written = 0
            while written < 5 {
              // The server's newest version, not memory's: these replicas do not listen.
              let newest = try await counter.history(limit: 1).first
              do {
                try await counter.set((newest?.value ?? 0) + 1, ifVersion: newest?.version ?? 0)
                written += 1
              } catch is VersionConflict {}
            }
            successes.withLock { [written] in $0 += written }
          }
        }
      }
      try await group.waitForAll()
    }
    let written = successes.withLock { $0 }
    try #require(written == 40)
    #expect(
      try await fixture.psql("SELECT payload FROM pld_values ORDER BY version DESC LIMIT 1") == "\(written)")
    #expect(
      try await fixture.psql("SELECT count(*) = max(version) AND min(version) = 1 FROM pld_values") == "t",
      "gap-free")
    for replica in replicas { await replica.shutDown() }
  }
}
