import Foundation
import PLDTestSupport
import PersistentLiveData
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// The periodic catch-up, the path that delivers a version whose notification never came: it asks the
/// server which keys changed since its last look, and skips no commit, whatever order transactions
/// commit in.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedCatchUpTests {
  /// A write committed as the library commits one, without a notification: as if its writer died
  /// between its commit and its notification.
  static func writeWithoutNotifying(_ key: String, _ value: Int) -> String {
    """
    WITH head AS (
      INSERT INTO pld_heads AS h (key_hash, key, version)
      VALUES (encode(sha256(convert_to('\(key)', 'UTF8')), 'hex'), '\(key)', 1)
      ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
    )
    INSERT INTO pld_values (key_hash, version, payload)
    SELECT encode(sha256(convert_to('\(key)', 'UTF8')), 'hex'), version, '\(value)' FROM head
    """
  }

  @Test func aVersionNobodyWasNotifiedOfReachesAReplicaWithManyLiveKeys() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(100)
    let b = fixture.replica(options: options)
    var created: [SharedLiveData<Int>] = []
    for index in 0..<200 { created.append(try await b.store.liveData("key-\(index)", default: 0)) }
    let live = created
    try await Listeners.expectListening([b], fixture, "the replica listens")
    // Several looks, so that the next ones ask only for what changed.
    try await Task.sleep(for: .milliseconds(500))
    let observed = Recorder<Int>()
    let observer = await FailureHelpers.record(live[137], into: observed)

    try await fixture.psql(Self.writeWithoutNotifying("key-137", 4_242))
    try await fixture.psql(Self.writeWithoutNotifying("not-live-here", 1))
    #expect(await eventually { live[137].value == 4_242 }, "\(b.log.last(10))")
    #expect(live[137].version == 1)
    try await fixture.psql(Self.writeWithoutNotifying("key-137", 4_243))
    #expect(await eventually { live[137].value == 4_243 })
    #expect(live[137].version == 2)
    // Observers get the latest value, at most once each and in order; a delivery still waiting for the
    // main actor when the next version arrives is coalesced into it (seen under ThreadSanitizer).
    #expect(await eventually { observed.all.last == 4_243 }, "\(observed.all)")
    #expect(observed.all == [4_242, 4_243] || observed.all == [4_243], "each version once: \(observed.all)")
    #expect(live.enumerated().allSatisfy { $0.offset == 137 || $0.element.version == 0 })
    observer.cancel()
    await b.shutDown()
  }

  /// Transaction ids are not given in commit order: a transaction that wrote first and commits after a
  /// later one (which the catch-up has already seen) is still found. A catch-up that resumed after the
  /// largest id it saw would skip it for good.
  @Test func aTransactionThatCommitsAfterALaterOneIsNotSkipped() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(100)
    let b = fixture.replica(options: options)
    let early = try await b.store.liveData("early", default: 0)
    let late = try await b.store.liveData("late", default: 0)
    try await Listeners.expectListening([b], fixture, "the replica listens")
    try await Task.sleep(for: .milliseconds(500))
    let changes = Task { await FailureHelpers.collect(early.changes(since: 0), count: 1) }

    let writer = fixture.replica(listening: false)
    try await writer.client.withConnection { connection in
      try await connection.query("BEGIN", logger: SharedSchema.quiet)
      // The id of this transaction is given here, before the other one's.
      try await connection.query(
        PostgresQuery(unsafeSQL: Self.writeWithoutNotifying("early", 1)), logger: SharedSchema.quiet)
      try await fixture.psql(Self.writeWithoutNotifying("late", 2))
      #expect(await eventually { late.value == 2 }, "the catch-up saw the later transaction")
      // Several looks pass while the first transaction is still open.
      try await Task.sleep(for: .milliseconds(500))
      #expect(early.version == 0)
      try await connection.query("COMMIT", logger: SharedSchema.quiet)
    }
    #expect(
      await eventually { early.value == 1 }, "the earlier transaction, committed last: \(b.log.last(10))")
    let delivered = await changes.value
    #expect(delivered.error == nil)
    #expect(delivered.versions.map(\.version) == [1])
    await writer.shutDown()
    await b.shutDown()
  }

  /// A database a replica of schema version 1 wrote is migrated; its rows (without `changed_by`) are
  /// read as before, and later writes that notify nobody are still caught up.
  @Test func aDatabaseOfSchemaVersionOneIsMigratedAndCaughtUpAfter() async throws {
    let fixture = try await SharedFixture()
    for statement in SharedSchema.statements(in: SharedSchema.migrations[0].sql) {
      try await fixture.psql(statement)
    }
    try await fixture.psql(
      """
      CREATE TABLE pld_schema (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO pld_schema (version, name) VALUES (1, '0001_shared_schema.sql')
      """)
    try await fixture.psql(Self.writeWithoutNotifying("old", 7))
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(100)
    let b = fixture.replica(options: options)
    let old = try await b.store.liveData("old", default: 0)
    #expect(old.value == 7)
    #expect(old.version == 1)
    #expect(
      try await fixture.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM pld_schema")
        == SharedSchema.migrations.map { "\($0.version)" }.joined(separator: ","))
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values WHERE changed_by IS NULL") == "1")
    try await Listeners.expectListening([b], fixture, "the replica listens")
    try await Task.sleep(for: .milliseconds(500))
    try await fixture.psql(Self.writeWithoutNotifying("old", 8))
    #expect(await eventually { old.value == 8 }, "\(b.log.last(10))")
    #expect(old.version == 2)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values WHERE changed_by IS NULL") == "1")
    await b.shutDown()
  }

  /// What one periodic catch-up costs with 10,000 live keys and nothing changed: comparing every live key
  /// (what each catch-up did before schema version 2, and what the first one still does) against asking
  /// what changed. A figure, not a check: run it alone (`PLD_MEASURE_CATCH_UP=1 swift test --filter
  /// catchUpCost`); it records `POSTGRES catch-up-…` lines in the test figures.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["PLD_MEASURE_CATCH_UP"] != nil))
  func catchUpCostWithTenThousandLiveKeys() async throws {
    let fixture = try await SharedFixture()
    let keys = 10_000
    let b = fixture.replica(listening: false)
    _ = try await b.store.keys()  // the schema
    try await fixture.psql(
      """
      INSERT INTO pld_heads SELECT encode(sha256(convert_to('key-' || i, 'UTF8')), 'hex'), 'key-' || i, 1
      FROM generate_series(1, \(keys)) i;
      INSERT INTO pld_values (key_hash, version, payload)
      SELECT encode(sha256(convert_to('key-' || i, 'UTF8')), 'hex'), 1, i::text FROM generate_series(1, \(keys)) i;
      ANALYZE pld_heads; ANALYZE pld_values
      """)
    var live: [SharedLiveData<Int>] = []
    for index in 1...keys { live.append(try await b.store.liveData("key-\(index)", default: 0)) }
    let listener = SharedListener(database: b.store.database)
    let rounds = 20
    try await b.client.withConnection { connection in
      var pid: Int32 = 0
      for try await found in try await connection.query("SELECT pg_backend_pid()", logger: SharedSchema.quiet)
        .decode(Int32.self)
      {
        pid = found
      }
      let route = ReadRoute.connection(connection)
      try await listener.catchUpChanges(via: route)  // the first look compares every key
      for (name, look) in [
        ("every-key", { try await listener.catchUp(via: route) }),
        ("changed", { try await listener.catchUpChanges(via: route) }),
      ] as [(String, () async throws -> Void)] {
        try await look()
        let (replicaBefore, serverBefore, started) = (
          Self.processCPU(), Self.backendCPU(pid), ContinuousClock.now
        )
        for _ in 0..<rounds { try await look() }
        let elapsed = started.duration(to: .now) / rounds
        let replica = (Self.processCPU() - replicaBefore) / rounds
        let server = serverBefore.map { (Self.backendCPU(pid) ?? $0) - $0 }.map { $0 / rounds }
        TestFigures.record(
          "POSTGRES catch-up-\(name) keys=\(keys) wall-ms=\(Self.ms(elapsed)) replica-cpu-ms=\(Self.ms(replica)) "
            + "server-cpu-ms=\(server.map { Self.ms($0) } ?? "n/a")")
      }
    }
    withExtendedLifetime(live) {}
    await b.shutDown()
  }

  static func ms(_ duration: Duration) -> String {
    String(format: "%.2f", duration / .milliseconds(1))
  }

  /// The CPU time this process used so far.
  static func processCPU() -> Duration {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    let user = Duration.seconds(usage.ru_utime.tv_sec) + .microseconds(usage.ru_utime.tv_usec)
    let system = Duration.seconds(usage.ru_stime.tv_sec) + .microseconds(usage.ru_stime.tv_usec)
    return user + system
  }

  /// The CPU time a server backend of this machine used so far; nil when it is not here.
  static func backendCPU(_ pid: Int32) -> Duration? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
    let ticks = sysconf(Int32(_SC_CLK_TCK))
    return .milliseconds((user + system) * 1000 / ticks)
  }

  /// Writes per second of 4 replicas × 8 tasks, each calling `set` on its own key, against raw
  /// postgres-nio writing the same rows with the same concurrency (heads upsert + value insert, one
  /// statement), without and with a NOTIFY in the transaction. A figure, not a check: meaningful only on
  /// a durable server (fsync on, a data directory on a real disk) given by `PLD_POSTGRES_URL`; run it
  /// alone with `PLD_MEASURE_THROUGHPUT=1`.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["PLD_MEASURE_THROUGHPUT"] != nil))
  func writeThroughputOfFourReplicasAgainstRawPostgresNIO() async throws {
    let fixture = try await SharedFixture()
    let replicas = (0..<4).map { _ in fixture.replica() }
    let tasks = 8
    let period = Duration.seconds(5)
    var live: [[SharedLiveData<Int>]] = []
    for (index, replica) in replicas.enumerated() {
      var mine: [SharedLiveData<Int>] = []
      for task in 0..<tasks {
        mine.append(try await replica.store.liveData("lib-\(index)-\(task)", default: 0))
      }
      live.append(mine)
    }
    try await Listeners.expectListening(replicas, fixture, "every replica listens")
    var figures: [String: [Double]] = [:]
    for _ in 0..<2 {
      for mode in ["store", "raw", "raw-notify"] {
        let deadline = ContinuousClock.now + period
        let count = await withTaskGroup(of: Int.self) { group in
          for (index, replica) in replicas.enumerated() {
            for task in 0..<tasks {
              let data = live[index][task]
              let key = "\(mode)-\(index)-\(task)"
              group.addTask {
                var written = 0
                while ContinuousClock.now < deadline {
                  do {
                    if mode == "store" {
                      try await data.set(written)
                    } else {
                      try await Self.rawWrite(replica.client, key: key, notify: mode == "raw-notify")
                    }
                    written += 1
                  } catch {
                    Issue.record("\(mode): \(error)")
                    return written
                  }
                }
                return written
              }
            }
          }
          return await group.reduce(0, +)
        }
        figures[mode, default: []].append(Double(count) / (period / .seconds(1)))
      }
    }
    let best = figures.mapValues { $0.max() ?? 0 }
    let ratio = (best["store"] ?? 0) / max(1, best["raw"] ?? 0)
    TestFigures.record(
      "POSTGRES throughput-4x8 store=\(Int(best["store"] ?? 0))/s raw=\(Int(best["raw"] ?? 0))/s "
        + "raw-notify=\(Int(best["raw-notify"] ?? 0))/s store/raw=\(String(format: "%.2f", ratio)) runs=\(figures)"
    )
    for replica in replicas { await replica.shutDown() }
  }

  /// One write as a program would send it itself with postgres-nio.
  static func rawWrite(_ client: PostgresClient, key: String, notify: Bool) async throws {
    let notified =
      notify
      ? ", notified AS (SELECT pg_notify('pld_changes', version::text || ' raw k ' || $1) FROM inserted)" : ""
    var binds = PostgresBindings(capacity: 2)
    binds.append(key)
    binds.append("12345")
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: """
          WITH head AS (
            INSERT INTO pld_heads AS h (key_hash, key, version) VALUES ($1, $1, 1)
            ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
          ), inserted AS (
            INSERT INTO pld_values (key_hash, version, payload, schema_version)
            SELECT $1, version, $2, 1 FROM head RETURNING version
          )\(notified)
          SELECT inserted.version FROM inserted\(notify ? ", notified" : "")
          """, binds: binds), logger: SharedSchema.quiet)
    for try await _ in rows {}
  }
}
