// A replica of a service in a process of its own, for the shared-store tests (SharedProcessTests).
//
//   pld-postgres-child MODE ENDPOINT USER DATABASE KEY COUNT
//
// ENDPOINT is a Unix socket path (starting with "/") or HOST:PORT; a password, if the server needs one, comes
// in the environment variable PLD_CHILD_PASSWORD. The key holds an Int (default 0). Modes:
//
//   write      sets the values 1 … COUNT, one after the other, then prints "done VERSION"
//   write2     the same with a value type of schema version 2 (`{"count": N, "note": "schema 2"}`)
//   increment  runs `update { $0 += 1 }` COUNT times, then prints "done VERSION"
//   observe    prints "version V value X" for each version `changes(since: 0)` delivers until version
//              COUNT, then "done"
//   serve      prints "opened V stale|fresh" once the key is open (its local cache flushed), then
//              "version V" for each version `changes(since:)` delivers after it until version COUNT, then
//              "done V stale|fresh" once the live value is at COUNT and confirmed (or 30 s passed)
//
// With PLD_CHILD_CACHE=PATH in the environment, the store keeps its local cache in PATH
// (`PostgresStoreOptions.localCachePath`).
//
// Lines go straight to file descriptor 1 (no buffering), so the parent sees each one as it happens. Any
// failure prints "error DESCRIPTION" and exits with status 1; wrong arguments exit with status 64.
import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to standard output at once.
func emit(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  var written = 0
  while written < bytes.count {
    let count = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else { return }
    written += count
  }
}

/// How to reach the server, from the command line.
func configuration(endpoint: String, user: String, database: String) -> PostgresClient.Configuration? {
  let password = ProcessInfo.processInfo.environment["PLD_CHILD_PASSWORD"]
  var configuration: PostgresClient.Configuration
  if endpoint.hasPrefix("/") {
    configuration = .init(unixSocketPath: endpoint, username: user, password: password, database: database)
  } else {
    let parts = endpoint.split(separator: ":")
    guard parts.count == 2, let port = Int(parts[1]) else { return nil }
    configuration = .init(
      host: String(parts[0]), port: port, username: user, password: password, database: database,
      tls: .disable)
  }
  configuration.options.connectTimeout = .seconds(5)
  return configuration
}

/// A value type at schema version 2 (`write2`): an app that upgraded its type writes such versions.
struct Evolved: PersistentValue {
  static let schemaVersion = 2
  var count: Int
  var note: String

  init(count: Int, note: String) {
    self.count = count
    self.note = note
  }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    self.init(count: try Int(from: decoder), note: "")
  }
}

/// Runs one mode on a running client and store; returns the exit status.
func perform(mode: String, key: String, count: Int, store: PostgresStore) async throws -> Int32 {
  if mode == "write2" {
    let evolved = try await store.liveData(key, default: Evolved(count: 0, note: ""))
    for value in 1...count { try await evolved.set(Evolved(count: value, note: "schema 2")) }
    emit("done \(evolved.version)")
    return 0
  }
  let data = try await store.liveData(key, default: 0)
  switch mode {
  case "write":
    for value in 1...count {
      try await data.set(value)
    }
    emit("done \(data.version)")
  case "increment":
    for _ in 0..<count {
      try await data.update { $0 += 1 }
    }
    emit("done \(data.version)")
  case "serve":
    store.flushLocalCache()
    emit("opened \(data.version) \(data.isStale ? "stale" : "fresh")")
    if data.version < Int64(count) {
      for try await change in data.changes(since: data.version) {
        emit("version \(change.version)")
        if change.version >= Int64(count) { break }
      }
    }
    // `changes(since:)` reads stored versions from the server itself; the live value follows on its own
    // (the open's read of the server, the listener's catch-up): "done" is said once it did, or after 30 s.
    let deadline = ContinuousClock.now + .seconds(30)
    while data.version < Int64(count) || data.isStale, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    store.flushLocalCache()
    emit("done \(data.version) \(data.isStale ? "stale" : "fresh")")
  case "observe":
    for try await change in data.changes(since: 0) {
      emit("version \(change.version) value \(change.value)")
      if change.version >= Int64(count) { break }
    }
    emit("done")
  default:
    emit("error unknown mode \(mode)")
    return 64
  }
  return 0
}

func main() async -> Int32 {
  let arguments = CommandLine.arguments
  guard arguments.count == 7, let count = Int(arguments[6]), count >= 1,
    let configuration = configuration(endpoint: arguments[2], user: arguments[3], database: arguments[4])
  else {
    emit(
      "error usage: pld-postgres-child write|write2|increment|observe|serve ENDPOINT USER DATABASE KEY COUNT")
    return 64
  }
  let client = PostgresClient(configuration: configuration)
  var options = PostgresStoreOptions()
  if let cache = ProcessInfo.processInfo.environment["PLD_CHILD_CACHE"] {
    options.localCachePath = cache
    options.catchUpInterval = .milliseconds(250)
  }
  let store = PostgresStore(client: client, options: options)
  let services = Task {
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await client.run() }
      group.addTask { try? await store.run() }
    }
  }
  let status: Int32
  do {
    status = try await perform(mode: arguments[1], key: arguments[5], count: count, store: store)
  } catch {
    emit("error \(error)")
    status = 1
  }
  services.cancel()
  await services.value
  return status
}

exit(await main())
