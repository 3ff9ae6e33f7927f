import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataPostgres

/// `pld_replicas` (shared schema 6): every running replica records its release, the shared schema it
/// knows and its access, with a heartbeat; ``PostgresStore/replicas()`` lists the live ones with the
/// migrations that strand each.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedReplicasTests {
  static var fast: PostgresStoreOptions {
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(100)  // a heartbeat every second
    return options
  }

  /// A replica of another release, recorded by hand.
  static func recordReplica(
    _ fixture: SharedFixture, id: String, schema: Int, heartbeatAge: String = "0 seconds"
  ) async throws {
    try await fixture.psql(
      """
      INSERT INTO pld_replicas (id, host, pid, library_version, schema_version, access, heartbeat_at)
      VALUES ('\(id)', 'elsewhere', 7, '0.3.0', \(schema), 'read-write', now() - interval '\(heartbeatAge)')
      """)
  }

  @Test func runningReplicasAreListedWithTheirReleaseAndLeaveWhenTheyEnd() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: Self.fast)
    // B runs its own client, as an app's store made from a configuration does: when its run() ends, the
    // client is still there to delete the row (a replica whose client went first leaves a row that goes
    // stale, below).
    let b = PostgresStore(configuration: fixture.configuration, options: Self.fast)
    let runningB = Task { try await b.run() }
    #expect(await eventually { ((try? await a.store.replicas()) ?? []).count == 2 })
    let listed = try await a.store.replicas()
    #expect(listed.count == 2, "\(listed)")
    let pid = Int(ProcessInfo.processInfo.processIdentifier)
    for replica in listed {
      #expect(replica.libraryVersion == LibraryVersion.current)
      #expect(replica.schemaVersion == SharedSchema.current)
      #expect(replica.processID == pid && replica.host == ProcessInfo.processInfo.hostName)
      #expect(!replica.isReadOnly && replica.strandedBy.isEmpty)
      #expect(replica.startedAt <= replica.heartbeatAt)
    }
    #expect(Set(listed.map(\.id)).count == 2, "each run has an id of its own")
    // The heartbeat moves.
    let first = try await fixture.psql("SELECT max(heartbeat_at) FROM pld_replicas")
    #expect(
      await eventually { (try? await fixture.psql("SELECT max(heartbeat_at) FROM pld_replicas")) != first })
    runningB.cancel()
    try await runningB.value
    #expect(
      try await fixture.psql("SELECT count(*) FROM pld_replicas") == "1",
      "the replica that ended deleted its row")
    #expect(try await a.store.replicas().count == 1)
    await a.shutDown()
  }

  @Test func aReplicaSilentForAMinuteIsLeftOutAndDeletedByTheNextStart() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: Self.fast)
    #expect(await eventually { ((try? await a.store.replicas()) ?? []).count == 1 })
    try await Self.recordReplica(fixture, id: "gone", schema: SharedSchema.current, heartbeatAge: "2 minutes")
    try await Self.recordReplica(fixture, id: "alive", schema: SharedSchema.current)
    #expect(try await a.store.replicas().map(\.id).contains("alive"))
    #expect(!(try await a.store.replicas().map(\.id).contains("gone")))
    let b = fixture.replica(options: Self.fast)
    #expect(
      await eventually {
        (try? await fixture.psql("SELECT count(*) FROM pld_replicas WHERE id = 'gone'")) == "0"
      })
    #expect(try await fixture.psql("SELECT count(*) FROM pld_replicas WHERE id = 'alive'") == "1")
    await a.shutDown()
    await b.shutDown()
  }

  /// The migrations a replica does not know and that are not read-write strand it: this release's own
  /// (0001, incompatible, for a release that knows none) and a newer release's.
  @Test func migrationsMarkedReadOnlyOrIncompatibleNameTheReplicasTheyStrand() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: Self.fast)
    #expect(await eventually { ((try? await a.store.replicas()) ?? []).count == 1 })
    try await Self.recordReplica(fixture, id: "previous", schema: SharedSchema.current - 1)
    try await Self.recordReplica(fixture, id: "none", schema: 0)
    var byID = Dictionary(uniqueKeysWithValues: try await a.store.replicas().map { ($0.id, $0) })
    #expect(byID["previous"]?.strandedBy == [], "every migration since is read-write")
    #expect(byID["none"]?.strandedBy == ["0001_shared_schema.sql (incompatible)"])
    try await SharedMigrationCompatibilityTests.migrateAsANewerRelease(fixture, mark: .readOnly)
    byID = Dictionary(uniqueKeysWithValues: try await a.store.replicas().map { ($0.id, $0) })
    let next = "\(SharedMigrationCompatibilityTests.next) (read-only)"
    #expect(byID["previous"]?.strandedBy == [next])
    #expect(byID["none"]?.strandedBy == ["0001_shared_schema.sql (incompatible)", next])
    #expect(
      try await a.store.replicas().filter { $0.libraryVersion == LibraryVersion.current }.map(\.strandedBy)
        == [[next]], "this release's replica too: it does not know the newer migration")
    // A replica of this release started now runs read-only, and says so.
    let b = fixture.replica(options: Self.fast)
    _ = try await b.store.liveData("k", default: 0)
    #expect(
      await eventually {
        ((try? await a.store.replicas()) ?? []).contains {
          $0.isReadOnly && $0.libraryVersion == LibraryVersion.current
        }
      })
    await a.shutDown()
    await b.shutDown()
  }
}
