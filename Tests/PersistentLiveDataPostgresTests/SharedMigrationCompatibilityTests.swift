import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataPostgres

/// The compatibility promise (README) on a real server: each shared-schema migration records what a replica
/// that does not know it may do, and a replica meeting a newer release's migrations runs read-write,
/// read-only or not at all by the worst of their marks — it never crash-loops on an additive change.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedMigrationCompatibilityTests {
  /// What the next release would do: add a column, and record its migration with `mark`.
  static func migrateAsANewerRelease(_ fixture: SharedFixture, mark: MigrationCompatibility) async throws {
    // A replica shut down just before may still have a statement running on the server for a moment (its
    // change feed's index, built concurrently, which waits for every transaction): this migration, which
    // locks pld_values, would deadlock with it. Wait until no other session of the database is busy.
    #expect(
      await eventually(.seconds(30)) {
        (try? await fixture.psql(
          """
          SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
          """)) == "0"
      }, "no other session of the database is busy")
    try await fixture.psql(
      """
      ALTER TABLE pld_values ADD COLUMN next_release text;
      INSERT INTO pld_schema (version, name, compatibility)
      VALUES (\(SharedSchema.current + 1), '\(Self.next)', '\(mark.rawValue)')
      """)
  }

  static func isTooNew(_ error: any Error, found: Int) -> Bool {
    guard case SharedStoreError.schemaTooNew(let seen, let supported) = error else { return false }
    return seen == found && supported == SharedSchema.current
  }

  static var next: String { Migration.fileStem(version: SharedSchema.current + 1, name: "next_release.sql") }

  @Test func everyMigrationRecordsItsMark() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    _ = try await a.store.liveData("k", default: 0)
    let expected = SharedSchema.migrations.map {
      "\($0.version)|\(SharedSchema.compatibility(of: $0.version).rawValue)"
    }
    #expect(
      try await fixture.psql(
        "SELECT string_agg(version || '|' || compatibility, E'\\n' ORDER BY version) FROM pld_schema")
        == expected.joined(separator: "\n"))
    #expect(expected.first == "1|incompatible")
    await a.shutDown()
  }

  /// A replica of this release started after a newer one added a column keeps serving beside a replica
  /// that was running before: reads, writes, and each hears the other's writes.
  @Test func aReplicaKeepsServingAcrossANewerReleasesAdditiveMigration() async throws {
    let fixture = try await SharedFixture()
    let before = fixture.replica()
    let onBefore = try await before.store.liveData("shared", default: 0)
    try await onBefore.set(1)
    try await Self.migrateAsANewerRelease(fixture, mark: .readWrite)
    let after = fixture.replica()
    let onAfter = try await after.store.liveData("shared", default: 0)
    #expect(onAfter.value == 1)
    try await Listeners.expectListening([before, after], fixture, "both replicas listen")
    try await onAfter.set(2)
    #expect(await eventually { onBefore.value == 2 }, "the replica that was running hears it")
    try await onBefore.set(3)
    #expect(await eventually { onAfter.value == 3 }, "and the one started after the migration")
    #expect(before.isRunning && after.isRunning, "\(after.runOutcome.value ?? "")")
    await before.shutDown()
    await after.shutDown()
  }

  /// A migration marked read-only: the replica starts, reads and follows other writers, and each write
  /// throws naming the migration, with nothing written.
  @Test func aReadOnlyMigrationLetsTheReplicaReadAndFollowButNotWrite() async throws {
    let fixture = try await SharedFixture()
    let writer = fixture.replica()
    try await writer.store.liveData("shared", default: 0).set(1)
    await writer.shutDown()
    try await Self.migrateAsANewerRelease(fixture, mark: .readOnly)
    let replica = fixture.replica()
    let shared = try await replica.store.liveData("shared", default: 0)
    #expect(shared.value == 1)
    let refused = SharedStoreError.readOnlyMigration(migration: Self.next)
    let isRefused: @Sendable (any Error) -> Bool = {
      guard case SharedStoreError.readOnlyMigration(let migration) = $0 else { return false }
      return migration == Self.next
    }
    await #expect { try await shared.set(2) } throws: { isRefused($0) }
    await #expect { try await shared.update { $0 += 1 } } throws: { isRefused($0) }
    await #expect { try await replica.store.liveData("other", default: 0).set(1) } throws: { isRefused($0) }
    await #expect { try await replica.store.removeKey("shared") } throws: { isRefused($0) }
    #expect(shared.value == 1 && shared.version == 1, "memory did not move")
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "1", "nothing was written")
    #expect(refused.description.contains(Self.next))
    // A newer replica's write (made here by hand, announced as it would be) still reaches it.
    try await Listeners.expectListening([replica], fixture, "the read-only replica listens")
    try await fixture.psql(
      """
      WITH head AS (UPDATE pld_heads SET version = 2 WHERE key = 'shared' RETURNING key_hash, version)
      INSERT INTO pld_values (key_hash, version, payload, schema_version) SELECT key_hash, version, '5', 1 FROM head
      """)
    _ = try await fixture.psql(
      "SELECT pg_notify('\(SharedDatabase.channel)', E'pld-notify/2\\n2 0ther k shared')")
    #expect(await eventually { shared.value == 5 }, "it follows the newer replicas")
    #expect(replica.isRunning)
    await replica.shutDown()
  }

  /// A migration marked incompatible (or a newer database without marks for what it added) is refused
  /// as before: nothing is read or written.
  @Test func anIncompatibleMigrationIsRefused() async throws {
    let fixture = try await SharedFixture()
    let writer = fixture.replica()
    try await writer.store.liveData("shared", default: 0).set(1)
    await writer.shutDown()
    try await Self.migrateAsANewerRelease(fixture, mark: .incompatible)
    let replica = fixture.replica(listening: false)
    await #expect {
      _ = try await replica.store.liveData("shared", default: 0)
    } throws: { Self.isTooNew($0, found: SharedSchema.current + 1) }
    await replica.shutDown()
    // Without the row of one migration it does not know, nothing says what it changed.
    try await fixture.psql(
      "UPDATE pld_schema SET compatibility = 'read-write'; INSERT INTO pld_schema (version, name) VALUES (\(SharedSchema.current + 3), 'later')"
    )
    let another = fixture.replica(listening: false)
    await #expect {
      _ = try await another.store.liveData("shared", default: 0)
    } throws: { Self.isTooNew($0, found: SharedSchema.current + 3) }
    await another.shutDown()
  }
}
