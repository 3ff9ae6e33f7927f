import Foundation
import PLDTestSupport
import PersistentLiveData
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// `WriteAttribution` (the AuditTrails article) on a shared store: every write records the attribution of its caller in
/// the row, and every replica reads it back.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedAttributionTests {
  static let ops = WriteAttribution(author: "ops", reason: "INC-42")

  static func by(_ author: String) -> WriteAttribution {
    WriteAttribution(author: author, reason: "r-\(author)")
  }

  @Test func everyWriteRecordsItsCallersAttributionAndAnotherReplicaReadsIt() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let count = try await a.store.liveData("count", default: 0)
    let other = try await a.store.liveData("other", default: "")
    let onB = try await b.store.liveData("count", default: 0)
    // Replica B follows every version as it arrives (notification or catch-up, then a read of the row).
    let followed = Task {
      var seen: [Versioned<Int>] = []
      for try await change in onB.changes(since: 0) {
        seen.append(change)
        if change.version == 6 { break }
      }
      return seen
    }

    try await count.set(1)
    try await WriteAttribution.$current.withValue(Self.by("set")) { try await count.set(2) }
    try await WriteAttribution.$current.withValue(Self.by("update")) { try await count.update { $0 += 1 } }
    try await WriteAttribution.$current.withValue(Self.by("rollback")) { try await count.rollback(to: 1) }
    try await WriteAttribution.$current.withValue(Self.by("transaction")) {
      try await a.store.transaction { transaction in
        try transaction.set(count, to: 10)
        try WriteAttribution.$current.withValue(Self.by("inner")) { try transaction.set(other, to: "x") }
      }
    }
    try await WriteAttribution.$current.withValue(WriteAttribution(reason: "reason only")) {
      try await count.set(11)
    }

    let expected: [WriteAttribution?] = [
      nil, Self.by("set"), Self.by("update"), Self.by("rollback"), Self.by("transaction"),
      WriteAttribution(reason: "reason only"),
    ]
    #expect(try await count.history().reversed().map(\.attribution) == expected)
    #expect(try await other.history().map(\.attribution) == [Self.by("inner")])
    // On the other replica: what it followed, and its own reads.
    let seen = try await followed.value
    #expect(seen.map(\.value) == [1, 2, 3, 1, 10, 11])
    #expect(seen.map(\.attribution) == expected)
    #expect(await eventually { onB.version == 6 })
    #expect(try await onB.history().reversed().map(\.attribution) == expected)
    #expect(
      try await fixture.psql(
        "SELECT string_agg(v.version || ':' || coalesce(author, '-') || ':' || coalesce(reason, '-'), ' ' "
          + "ORDER BY v.version) FROM pld_values v JOIN pld_heads h USING (key_hash) WHERE h.key = 'count'")
        == "1:-:- 2:set:r-set 3:update:r-update 4:rollback:r-rollback 5:transaction:r-transaction "
        + "6:-:reason only")
    await a.shutDown()
    await b.shutDown()
  }

  @MainActor
  @Test func versionedObserversOnBothReplicasReceiveTheAttribution() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("flags", default: 0)
    let onB = try await b.store.liveData("flags", default: 0)
    let seenOnA = Locked<[Versioned<Int>]>([])
    let seenOnB = Locked<[Versioned<Int>]>([])
    let observers = [
      onA.observeVersionedForever(receiveCurrent: false) { change in seenOnA.withLock { $0.append(change) } },
      onB.observeVersionedForever(receiveCurrent: false) { change in seenOnB.withLock { $0.append(change) } },
    ]
    defer { observers.forEach { $0.cancel() } }
    try await WriteAttribution.$current.withValue(Self.ops) { try await onA.set(1) }
    try await WriteAttribution.$current.withValue(Self.by("tx")) {
      try await a.store.transaction { transaction in try transaction.set(onA, to: 2) }
    }
    // (On a loaded machine the periodic catch-up may bring version 2 in before the transaction applies
    // it; its observers then hear of it just after the transaction returns.)
    #expect(await eventually { seenOnA.withLock { $0.last?.version } == 2 })
    #expect(seenOnA.withLock { $0.map(\.attribution) } == [Self.ops, Self.by("tx")])
    #expect(await eventually { seenOnB.withLock { $0.last?.version } == 2 })
    #expect(seenOnB.withLock { $0.last?.attribution } == Self.by("tx"))
    await a.shutDown()
    await b.shutDown()
  }

  @Test func sixteenConcurrentCallersEachRecordTheirOwn() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let counter = try await a.store.liveData("counter", default: [Int]())
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<16 {
        group.addTask {
          try await WriteAttribution.$current.withValue(Self.by("caller-\(index)")) {
            _ = try await counter.update { $0.append(index) }
          }
        }
      }
      try await group.waitForAll()
    }
    let history = try await counter.history()
    #expect(history.count == 16)
    for entry in history {
      let last = try #require(entry.value.last)
      #expect(entry.attribution == Self.by("caller-\(last)"))
    }
    await a.shutDown()
  }

  @Test func limitsAreCountedInBytesAndNothingIsWrittenPastThem() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("data", default: 0)
    let longestAuthor = String(repeating: "é", count: 128)
    let longestReason = String(repeating: "é", count: 2_048)
    let fits = WriteAttribution(author: longestAuthor, reason: longestReason)
    try await WriteAttribution.$current.withValue(fits) { try await data.set(1) }
    #expect(try await data.history().first?.attribution == fits)

    for (attribution, field, limit, count) in [
      (WriteAttribution(author: "a" + longestAuthor), "author", 256, 257),
      (WriteAttribution(reason: "a" + longestReason), "reason", 4_096, 4_097),
    ] {
      func expectRefused(_ what: String, _ body: () async throws -> Void) async {
        do {
          try await body()
          Issue.record("\(what) with a \(field) of \(count) bytes was not refused")
        } catch let error as WriteAttributionTooLong {
          #expect(error.field.name == field && error.limit == limit && error.byteCount == count)
        } catch {
          Issue.record("\(what): \(error)")
        }
      }
      await WriteAttribution.$current.withValue(attribution) {
        await expectRefused("set") { try await data.set(2) }
        await expectRefused("update") { try await data.update { $0 += 1 } }
        await expectRefused("rollback") { try await data.rollback(to: 1) }
        await expectRefused("transaction") {
          try await a.store.transaction { transaction in try transaction.set(data, to: 3) }
        }
      }
    }
    #expect(data.version == 1)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "1")
    #expect(try await fixture.psql("SELECT version FROM pld_heads") == "1")
    await a.shutDown()
  }

  /// A database of schema version 2 is migrated; its rows read without an attribution.
  @Test func aDatabaseOfSchemaVersionTwoIsMigratedAndItsRowsReadNil() async throws {
    let fixture = try await SharedFixture()
    for migration in SharedSchema.migrations.prefix(2) {
      for statement in SharedSchema.statements(in: migration.sql) { try await fixture.psql(statement) }
    }
    try await fixture.psql(
      """
      CREATE TABLE pld_schema (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO pld_schema (version, name) VALUES (1, '0001_shared_schema.sql'), (2, '0002_change_feed.sql')
      """)
    try await fixture.psql(SharedCatchUpTests.writeWithoutNotifying("old", 7))
    let a = fixture.replica()
    let old = try await a.store.liveData("old", default: 0)
    #expect(old.value == 7)
    try await WriteAttribution.$current.withValue(Self.ops) { try await old.set(8) }
    #expect(try await old.history().map(\.attribution) == [Self.ops, nil])
    #expect(
      try await fixture.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM pld_schema")
        == SharedSchema.migrations.map { "\($0.version)" }.joined(separator: ","))
    await a.shutDown()
  }
}
