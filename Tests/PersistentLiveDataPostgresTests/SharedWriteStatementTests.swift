import Foundation
import PLDTestSupport
import PersistentLiveData
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// Writes run as prepared statements: each shape is prepared once per connection, gives the same
/// versions and pruning as before, and keeps working when a migration changes the tables under it.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedWriteStatementTests {
  /// A client of one connection (so every statement of the test is prepared on it) and a store on it.
  struct OneConnection {
    let client: PostgresClient
    let store: PostgresStore
    let running: Task<Void, Never>

    init(_ fixture: SharedFixture, retention: HistoryRetention, prepares: Bool = true) {
      var configuration = fixture.configuration
      configuration.options.maximumConnections = 1
      client = PostgresClient(configuration: configuration)
      var options = PostgresStoreOptions()
      options.retention = retention
      options.preparesStatements = prepares
      store = PostgresStore(client: client, options: options)
      running = Task { [client] in await client.run() }
    }

    /// The names of the statements prepared on the connection.
    func prepared() async throws -> [String] {
      var names: [String] = []
      let rows = try await client.query("SELECT name FROM pg_prepared_statements ORDER BY name")
      for try await name in rows.decode(String.self) { names.append(name) }
      return names
    }

    func stop() async {
      running.cancel()
      await running.value
    }
  }

  /// Every shape — `set`, an `update` of a new key and of a written one, with and without retention, each
  /// carrying its notification as writes come one at a time — prepared once on the connection, its
  /// versions gap-free; then a column added to both tables (as a
  /// later migration would) and the same writes again, on the same connection, with the same results.
  @Test(arguments: [HistoryRetention.all, .last(2)])
  func everyShapeIsPreparedOnceAndSurvivesAChangedTable(retention: HistoryRetention) async throws {
    let fixture = try await SharedFixture()
    let replica = OneConnection(fixture, retention: retention)
    let suffix = retention == .all ? "" : "_pruned"
    let keep: Int64? = retention == .all ? nil : 2

    for round in 0..<2 {
      let plain = try await replica.store.liveData("plain-\(round)", default: 0)
      let counted = try await replica.store.liveData("counted-\(round)", default: 0)
      // A pause before each write: one at a time, not back to back (SharedNotifier.backToBack).
      let pause = { try await Task.sleep(for: .milliseconds(2)) }
      for value in 1...4 {
        try await pause()
        try await plain.set(value)
      }
      try await pause()
      try await counted.update { $0 += 10 }  // version 0 → 1: the "first" shape
      try await pause()
      try await counted.update { $0 += 10 }  // 1 → 2: the "after" shape
      try await pause()
      try await counted.update { $0 += 10 }
      #expect(plain.version == 4 && plain.value == 4)
      #expect(counted.version == 3 && counted.value == 30)
      let rows = { (key: String) in
        try await fixture.psql(
          "SELECT string_agg(v.version::text, ',' ORDER BY v.version) FROM pld_values v "
            + "JOIN pld_heads h USING (key_hash) WHERE h.key = '\(key)'")
      }
      #expect(try await rows("plain-\(round)") == (keep == nil ? "1,2,3,4" : "3,4"))
      #expect(try await rows("counted-\(round)") == (keep == nil ? "1,2,3" : "2,3"))
      let names = try await replica.prepared()
      #expect(
        names.filter { $0.hasPrefix("pld_write") }.sorted()
          == ["pld_write_after", "pld_write_first", "pld_write_next"].map { $0 + suffix + "_notify" },
        "round \(round): \(names)")
      // One write at a time: each carried its own notification, and the notifier's statement was never
      // needed.
      #expect(!names.contains("pld_notify"))
      if round == 0 {
        try await fixture.psql(
          "ALTER TABLE pld_values ADD COLUMN pld_test_extra integer DEFAULT 7; "
            + "ALTER TABLE pld_heads ADD COLUMN pld_test_extra text")
      }
    }
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values WHERE pld_test_extra = 7") != "0")
    await replica.stop()
  }

  /// With `preparesStatements` false (behind a pooler that does not track them), every shape runs as a
  /// plain query, and so do the notifications: nothing is prepared, and the versions and pruning are the
  /// same.
  @Test func withoutPreparedStatementsNothingIsPreparedAndWritesAreTheSame() async throws {
    let fixture = try await SharedFixture()
    let replica = OneConnection(fixture, retention: .last(2), prepares: false)
    var slowCatchUp = PostgresStoreOptions()
    slowCatchUp.catchUpInterval = .seconds(3_600)
    let other = fixture.replica(options: slowCatchUp)
    let plain = try await replica.store.liveData("plain", default: 0)
    let hearing = try await other.store.liveData("plain", default: 0)
    try await Listeners.expectListening([other], fixture, "the other replica listens")
    let counted = try await replica.store.liveData("counted", default: 0)
    for value in 1...4 { try await plain.set(value) }
    for _ in 0..<3 { try await counted.update { $0 += 10 } }
    try await replica.store.transaction { transaction in
      try transaction.set(plain, to: 5)
      try transaction.set(counted, to: 40)
    }
    #expect(plain.version == 5 && plain.value == 5)
    #expect(counted.version == 4 && counted.value == 40)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "4", "two kept of each key")
    // Another replica, whose periodic catch-up would take an hour, hears the writes: the notifications
    // went, and nothing was prepared for them either.
    #expect(await eventually { hearing.value == 5 }, "the other replica has \(hearing.value)")
    #expect(try await replica.prepared() == [], "no statement was prepared")
    await other.shutDown()
    await replica.stop()
  }

  /// The connection a statement was prepared on is gone (the server ended it): the next write is
  /// prepared again on a new connection and commits once.
  @Test func aWriteAfterTheConnectionWasTerminatedIsPreparedAgain() async throws {
    let fixture = try await SharedFixture()
    let replica = OneConnection(fixture, retention: .all)
    let data = try await replica.store.liveData("terminated", default: 0)
    try await data.set(1)
    try await fixture.psql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    var committed = false
    for _ in 0..<50 where !committed {
      do {
        try await data.set(2)
        committed = true
      } catch {
        try await Task.sleep(for: .milliseconds(100))
      }
    }
    #expect(committed, "a write commits on the new connection")
    #expect(data.version == 2 && data.value == 2)
    #expect(try await fixture.psql("SELECT max(version) FROM pld_values") == "2", "committed once")
    #expect(try await replica.prepared().contains("pld_write_next_notify"))
    await replica.stop()
  }
}
