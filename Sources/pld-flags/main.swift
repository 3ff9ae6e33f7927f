// pld-flags: one replica of a service that serves feature flags from a shared store on PostgreSQL, with
// its metrics for Prometheus.
//
//   pld-flags ENDPOINT USER DATABASE [PORT]
//
// ENDPOINT is a Unix socket path (any path with a "/", such as ./run/pg; a directory, such as
// /var/run/postgresql, means the socket `.s.PGSQL.PORT` in it, PORT from PGPORT or 5432, as psql takes it)
// or HOST:PORT of the PostgreSQL server; a password, if the server needs one, comes in the environment
// variable PLD_FLAGS_PASSWORD. PORT (default 8080; 0 for
// any free one) is where it serves, on 127.0.0.1:
//
//   GET  /flags              every flag, as JSON: {"new-checkout":true}
//   POST /flags/NAME/on      turns a flag on (an `update` of the shared key "feature-flags")
//   POST /flags/NAME/off     turns it off
//   GET  /status             {"stale":false,"serverReachable":true}: whether the flags come from the cache
//   GET  /metrics            the store's metrics (and any other swift-metrics series) in Prometheus's format
//
// Run several replicas on one database: a flag turned on through one is served by all of them at once.
//
// With PLD_FLAGS_CACHE=PATH in the environment, the replica keeps the flags it served in a local cache file
// (`PostgresStoreOptions.localCachePath`): restarted while PostgreSQL is down, it serves the last flags it
// saw (GET /status says "stale":true until the server confirms them), and refuses changes (503).
// It prints "listening on 127.0.0.1:PORT" once it serves, and stops on SIGINT or SIGTERM (exit status 0,
// whether the server answers, is down, halted or refuses the role).
import CoreMetrics
import Foundation
import Hummingbird
import Logging
import PersistentLiveDataPostgres
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// The flags of the service: one shared value, every replica's copy kept current by the store.
typealias Flags = [String: Bool]

/// How to reach the PostgreSQL server, from the command line.
func configuration(endpoint: String, user: String, database: String) -> PostgresClient.Configuration? {
  let password = ProcessInfo.processInfo.environment["PLD_FLAGS_PASSWORD"]
  if endpoint.contains("/") {
    // A directory is where the server keeps its socket, as psql takes it: `.s.PGSQL.PORT` inside it, the
    // port from PGPORT (5432 when unset).
    var isDirectory: ObjCBool = false
    let socket =
      FileManager.default.fileExists(atPath: endpoint, isDirectory: &isDirectory) && isDirectory.boolValue
      ? "\(endpoint)/.s.PGSQL.\(ProcessInfo.processInfo.environment["PGPORT"] ?? "5432")" : endpoint
    return .init(unixSocketPath: socket, username: user, password: password, database: database)
  }
  let parts = endpoint.split(separator: ":")
  guard parts.count == 2, let port = Int(parts[1]) else { return nil }
  return .init(
    host: String(parts[0]), port: port, username: user, password: password, database: database, tls: .disable)
}

let arguments = CommandLine.arguments
guard (4...5).contains(arguments.count),
  let postgres = configuration(endpoint: arguments[1], user: arguments[2], database: arguments[3]),
  let port = arguments.count == 5 ? Int(arguments[4]) : 8080
else {
  FileHandle.standardError.write(Data("usage: pld-flags ENDPOINT USER DATABASE [PORT]\n".utf8))
  exit(64)
}

// Metrics first: a store takes the metrics backend in effect when it is created. Durations of a few
// milliseconds need finer buckets than swift-prometheus's default (5 ms to 10 s).
let registry = PrometheusCollectorRegistry()
var metricsFactory = PrometheusMetricsFactory(registry: registry)
let storeBuckets: [Duration] = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000]
  .map { .microseconds($0) }
for label in ["pld.write.duration", "pld.commit.duration", "pld.delivery.delay"] {
  metricsFactory.durationHistogramBuckets[label] = storeBuckets
}
MetricsSystem.bootstrap(metricsFactory)

let logger = Logger(label: "pld-flags")
var storeOptions = PostgresStoreOptions(logger: logger)
storeOptions.localCachePath = ProcessInfo.processInfo.environment["PLD_FLAGS_CACHE"]
storeOptions.operationTimeout = .seconds(2)  // an answer, or an error, while the server is away
// The store runs its own client: a connection the server refuses (a role or database it does not know, a
// wrong password) is logged with its cause, and SIGINT or SIGTERM stops both in any state.
let store = PostgresStore(configuration: postgres, options: storeOptions)

/// The live flags, asked for once and kept: every replica then serves them from memory, and the store keeps
/// them current with the other replicas' writes (a live value nobody holds is let go).
actor LiveFlags {
  private let store: PostgresStore
  private var live: SharedLiveData<Flags>?

  init(store: PostgresStore) { self.store = store }

  func get() async throws -> SharedLiveData<Flags> {
    if let live { return live }
    let fetched = try await store.liveData("feature-flags", default: Flags())
    live = fetched
    return fetched
  }
}
let liveFlags = LiveFlags(store: store)

let router = Router()
router.get("/metrics") { _, _ -> Response in
  Response(
    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
    body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
}
router.get("/flags") { _, _ -> Response in
  let flags = try await liveFlags.get().value
  let json = try JSONEncoder().encode(flags)
  return Response(
    status: .ok, headers: [.contentType: "application/json"],
    body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
}
router.get("/status") { _, _ -> Response in
  // Whether the flags served are confirmed by the server, and whether it answers.
  let flags = try await liveFlags.get()
  let json = try JSONEncoder().encode(
    ["stale": flags.isStale, "serverReachable": store.isServerReachable])
  return Response(
    status: .ok, headers: [.contentType: "application/json"],
    body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
}
router.post("/flags/:name/:state") { _, context -> Response in
  let name = try context.parameters.require("name")
  guard let state = ["on": true, "off": false][try context.parameters.require("state")] else {
    return Response(status: .notFound)
  }
  let flags = try await liveFlags.get()
  do {
    try await flags.update { $0[name] = state }
  } catch is SharedStoreError {
    return Response(status: .serviceUnavailable)  // the server is away: nothing changed
  }
  return Response(status: .noContent)
}

let app = Application(
  router: router,
  configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
  services: [store],
  onServerRunning: { channel in
    // Straight to the file descriptor: a parent that waits for this line sees it at once.
    let line = "listening on 127.0.0.1:\(channel.localAddress?.port ?? port)\n"
    FileHandle.standardOutput.write(Data(line.utf8))
  },
  logger: logger)
try await app.runService()
