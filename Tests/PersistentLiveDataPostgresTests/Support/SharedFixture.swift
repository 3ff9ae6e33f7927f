import Foundation
import Logging
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO
import Testing

/// Whether the shared-store suites run: a local PostgreSQL installation or `PLD_POSTGRES_URL`.
let postgresAvailable = PostgresTestServer.unavailableReason == nil

/// A fresh database on a test server, and replicas of a service on it: each replica is its own
/// `PostgresClient` and `PostgresStore`, both running until ``Replica/shutDown()``.
///
/// Every process it runs (psql, and `CREATE DATABASE` through it) is waited for on a thread of its own:
/// a test that waited on a thread of the cooperative pool would hold one of the two this machine has, and
/// the replicas' work would wait behind it.
///
/// ```swift
/// let fixture = try await SharedFixture()
/// let a = fixture.replica(), b = fixture.replica()
/// let count = try await fixture.psql("SELECT count(*) FROM pld_values")
/// await a.shutDown(); await b.shutDown()
/// ```
struct SharedFixture: Sendable {
  let server: PostgresTestServer
  let configuration: PostgresClient.Configuration

  /// A new database on the shared test server, or on `server`.
  init(server: PostgresTestServer? = nil) async throws {
    if let server {
      self.server = server
    } else {
      self.server = try await PostgresTestServer.shared()
    }
    configuration = try await self.server.makeDatabase()
  }

  /// The name of this fixture's database.
  var database: String { configuration.database ?? "" }

  /// A replica: a client and a store on it, both running.
  /// A replica: a client and a store on it, both running — or, with `listening` false, only the client:
  /// the store then hears of no other replica's writes.
  func replica(options: PostgresStoreOptions = PostgresStoreOptions(), listening: Bool = true) -> Replica {
    Replica(configuration: configuration, options: options, listening: listening)
  }

  /// A new login role that may read and write the tables this fixture's database has now, and nothing
  /// more: no CREATE in its schema, as a service's role where an owner role runs the migrations. (The
  /// fixture's own role is a superuser, which no privilege stops.)
  ///
  /// With `canNotify` false, `pg_notify` is revoked from PUBLIC in the database as well: each of the
  /// role's commits is followed by a notification the server refuses, so that nobody hears of it, as when
  /// a writer dies between its commit and its notification. Open a key first, so that the tables exist.
  ///
  /// ```swift
  /// let role = try await fixture.roleWithTablePrivilegesOnly(canNotify: false)
  /// ```
  func roleWithTablePrivilegesOnly(canNotify: Bool = true) async throws -> String {
    let role = "pld_tables_only_\(database)\(canNotify ? "" : "_silent")"
    try await psql(
      """
      CREATE ROLE \(role) LOGIN;
      GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role);
      GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role);
      \(canNotify ? "" : "REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC;")
      """)
    return role
  }

  /// Runs SQL on this fixture's database with psql, waited for on a thread of its own.
  @discardableResult
  func psql(_ sql: String) async throws -> String {
    try await server.psql(sql, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

/// Runs `body` with a private server of its own (one it may restart, halt and resume), and stops and
/// removes the server afterwards, whether `body` returned or threw — awaited, where a
/// `defer { server.stop() }` would wait for `pg_ctl` on a thread of the cooperative pool.
///
/// ```swift
/// try await withPrivateServer { server in
///   let fixture = try await SharedFixture(server: server)
///   try await server.restart()
/// }
/// ```
func withPrivateServer<Result: Sendable>(
  network: PostgresTestServer.Network? = nil, _ body: (PostgresTestServer) async throws -> Result
) async throws -> Result {
  let server = try await PostgresTestServer.start(network: network)
  do {
    let result = try await body(server)
    await server.stop()
    return result
  } catch {
    await server.stop()
    throw error
  }
}

/// One replica of a service: its own client and store, running in a task of their own.
final class Replica: Sendable {
  let client: PostgresClient
  let store: PostgresStore
  private let running: Task<Void, Never>
  /// What `store.run()` ended with (nil while it runs or when it returned normally).
  let runOutcome = Outcome()

  /// What the store logged at `.debug` and above, when the test gave it no logger of its own: a failed
  /// check can say what the replica went through.
  let log = LogLines()

  init(configuration: PostgresClient.Configuration, options: PostgresStoreOptions, listening: Bool) {
    var configuration = configuration
    configuration.options.maximumConnections = 8
    var options = options
    if options.logger == nil {
      let lines = log
      var logger = Logger(label: "replica") { _ in
        RecordingLogHandler(logLevel: .debug) { level, message, metadata in
          let fields = metadata.map { "\($0)=\($1)" }.sorted()
          lines.append("\(level) \(message) \(fields.joined(separator: " "))")
        }
      }
      logger.logLevel = .debug
      options.logger = logger
    }
    let client = PostgresClient(configuration: configuration)
    let store = PostgresStore(client: client, options: options)
    self.client = client
    self.store = store
    let outcome = runOutcome
    running = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        guard listening else { return }
        group.addTask {
          do {
            try await store.run()
            outcome.set("returned")
          } catch {
            outcome.set("threw \(error)")
          }
        }
      }
    }
  }

  /// Whether `store.run()` is still running.
  var isRunning: Bool { runOutcome.value == nil }

  /// Cancels the store and the client and waits for both to end.
  func shutDown() async {
    running.cancel()
    await running.value
  }

  /// Log lines with the time since the replica started, newest last.
  final class LogLines: Sendable {
    private let started = ContinuousClock.now
    private let lines = Locked<[String]>([])

    /// The last `count` lines, one per line.
    func last(_ count: Int) -> String { lines.withLock { $0.suffix(count).joined(separator: "\n") } }

    func append(_ line: String) {
      let elapsed = (ContinuousClock.now - started).formatted(.units(allowed: [.milliseconds]))
      lines.withLock { $0.append("+\(elapsed) \(line)") }
    }
  }

  final class Outcome: Sendable {
    private let state = Locked<String?>(nil)
    var value: String? { state.withLock { $0 } }
    func set(_ text: String) { state.withLock { $0 = text } }
  }
}

/// Polls `condition` every 2 ms until it holds or `limit` passes (four times as long under a sanitizer,
/// whose slowdown is not the store's); returns whether it held.
///
/// The default is two minutes: it bounds a wait, it measures nothing. In the first half-minute of a whole
/// run every suite starts at once, and a replica's every step waits behind them for a cooperative thread
/// (two on the CI machines): applying the schema took 30 s there once, and a 30 s limit failed.
func eventually(
  _ limit: Duration = .seconds(120), _ condition: @Sendable () async throws -> Bool
) async rethrows -> Bool {
  let deadline = ContinuousClock.now + sanitizerScaled(limit)
  while ContinuousClock.now < deadline {
    if try await condition() { return true }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return try await condition()
}

/// `limit`, or four times it when the tests run under a sanitizer (`PLD_TESTS_UNDER_SANITIZER`), which
/// slows every thread down several times.
func sanitizerScaled(_ limit: Duration) -> Duration {
  ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] != nil ? limit * 4 : limit
}

/// The suites that start PostgreSQL servers of their own, stop and halt them, or run `pld-flags` against
/// them, one test at a time: each `initdb` and server start takes a core for a second or more, and
/// several at once on two cores starved every other shared-store suite's first call (its schema
/// preparation ran past `operationTimeout`).
@Suite(
  .serialized,
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
enum ServerFaultSuites {}
