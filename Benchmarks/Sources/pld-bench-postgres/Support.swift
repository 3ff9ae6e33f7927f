import Foundation
import Logging
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// A replica: its own client and store, both running.
final class Replica: Sendable {
  let client: PostgresClient
  let store: PostgresStore
  let task: Task<Void, Never>

  init(_ configuration: PostgresClient.Configuration, options: PostgresStoreOptions = PostgresStoreOptions())
  {
    let client = PostgresClient(configuration: configuration)
    var options = options
    // PLD_BENCH_CATCHUP_SECONDS: the periodic catch-up's interval, to measure what it costs under load.
    if let seconds = ProcessInfo.processInfo.environment["PLD_BENCH_CATCHUP_SECONDS"].flatMap(Double.init) {
      options.catchUpInterval = .milliseconds(Int(seconds * 1_000))
    }
    let store = PostgresStore(client: client, options: options)
    self.client = client
    self.store = store
    task = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        group.addTask { try? await store.run() }
      }
    }
  }

  func stop() async {
    task.cancel()
    await task.value
  }
}

/// A program writing the same rows with postgres-nio itself: a running client, no store.
final class RawWriter: Sendable {
  let client: PostgresClient
  let task: Task<Void, Never>

  init(_ configuration: PostgresClient.Configuration) {
    let client = PostgresClient(configuration: configuration)
    self.client = client
    task = Task { await client.run() }
  }

  func stop() async {
    task.cancel()
    await task.value
  }

  /// Each name with the hash the store gives it (SHA-256 of its UTF-8, hex), computed by the server.
  func keys(_ names: [String]) async throws -> [RawKey] {
    let rows = try await client.query(
      """
      SELECT k, encode(sha256(convert_to(k, 'UTF8')), 'hex') FROM unnest(\(names)::text[]) WITH ORDINALITY AS t(k, n)
      ORDER BY n
      """)
    var keys: [RawKey] = []
    for try await (name, hash) in rows.decode((String, String).self) {
      keys.append(RawKey(name: name, hash: hash))
    }
    return keys
  }

  /// The store's write of one key (SharedStatements.write: heads upsert + value insert, one statement,
  /// retention `.all`), with the same binds; `notify` adds the `pg_notify` the store used to send inside
  /// the statement (and so inside the transaction).
  func write(_ key: RawKey, payload: String, notify: Bool) async throws -> Int64 {
    let query = PostgresQuery(
      unsafeSQL: notify ? Self.notifyingSQL : Self.plainSQL, binds: Self.binds(key.hash, key.name, payload))
    let rows = try await client.query(query)
    for try await (version, _) in rows.decode((Int64, Int64).self) { return version }
    return 0
  }

  /// ``write(_:payload:notify:)`` without the notification, as a prepared statement.
  func writePrepared(_ key: RawKey, payload: String) async throws -> Int64 {
    for try await version in try await client.execute(
      RawPreparedWrite(hash: key.hash, name: key.name, payload: payload), logger: Self.quiet)
    {
      return version
    }
    return 0
  }

  private static let quiet = Logger(label: "raw", factory: { _ in SwiftLogNoOpLogHandler() })

  /// The statement: `$1` key hash, `$2` key, `$3` payload, `$4` schema version.
  static func sql(notify: Bool) -> String {
    """
    WITH head AS (
      INSERT INTO pld_heads AS h (key_hash, key, version) VALUES ($1, $2, 1)
      ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
    ), inserted AS (
      INSERT INTO pld_values (key_hash, version, payload, schema_version)
      SELECT $1, version, $3, $4 FROM head
      RETURNING version, written_at
    )\(notify ? notified : "")
    SELECT inserted.version, (extract(epoch FROM inserted.written_at) * 1000)::bigint FROM inserted\(notify ? ", notified" : "")
    """
  }

  static let plainSQL = sql(notify: false)
  static let notifyingSQL = sql(notify: true)

  static func binds(_ hash: String, _ name: String, _ payload: String) -> PostgresBindings {
    var binds = PostgresBindings(capacity: 4)
    binds.append(hash)
    binds.append(name)
    binds.append(payload)
    binds.append(Int64(1))
    return binds
  }

  /// The statement of ``write(_:payload:notify:)`` without the notification, prepared.
  struct RawPreparedWrite: PostgresPreparedStatement {
    typealias Row = Int64
    static let sql = RawWriter.plainSQL
    static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .int8]
    let hash: String
    let name: String
    let payload: String

    func makeBindings() -> PostgresBindings { RawWriter.binds(hash, name, payload) }

    func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode((Int64, Int64).self).0 }
  }

  private static let notified = """
    , notified AS (
      SELECT pg_notify('pld_changes', inserted.version::text || ' raw k ' || $2) FROM inserted
    )
    """
}

/// A key the raw contender writes, with its hash.
struct RawKey: Sendable {
  let name: String
  let hash: String
}

/// The four contenders of the scaling tables.
enum Contender: String, CaseIterable, Sendable {
  /// `SharedLiveData.set`: the store's statement (prepared), then its notification, gathered with
  /// others, in a statement of its own.
  case store
  /// Raw postgres-nio, the same statement sent as a query (parsed and planned each time), no
  /// notification at all: the baseline of issue 27's goal.
  case raw
  /// Raw postgres-nio, the same statement with `pg_notify` inside it (the store's old write).
  case notify
  /// Raw postgres-nio, the same statement as a `PostgresPreparedStatement`, no notification: what the
  /// store's writes do on the server since they are prepared.
  case prepared

  /// The contenders measured: all of them, or those `PLD_BENCH_CONTENDERS` names (comma-separated, e.g.
  /// `store` alone while a profiler records the run).
  static let measured: [Contender] = {
    guard let names = ProcessInfo.processInfo.environment["PLD_BENCH_CONTENDERS"] else { return allCases }
    let chosen = names.split(separator: ",").compactMap { Contender(rawValue: String($0)) }
    return chosen.isEmpty ? allCases : chosen
  }()

  /// The order of round `round`: every contender starts one round in three.
  static func order(round: Int) -> [Contender] {
    let all = measured
    return (0..<all.count).map { all[($0 + round) % all.count] }
  }
}

/// `tasks` tasks calling `write(task, iteration)` until `seconds` passed: the writes done, and the
/// seconds from the start until the last task returned.
func measureWrites(
  seconds: Double, tasks: Int,
  _ write: @escaping @Sendable (_ task: Int, _ iteration: Int) async throws -> Void
) async throws -> (writes: Int, seconds: Double) {
  let clock = ContinuousClock()
  let start = clock.now
  let end = start + .milliseconds(Int(seconds * 1_000))
  let writes = try await withThrowingTaskGroup(of: Int.self) { group in
    for task in 0..<tasks {
      group.addTask {
        var count = 0
        while clock.now < end {
          try await write(task, count)
          count += 1
        }
        return count
      }
    }
    return try await group.reduce(0, +)
  }
  return (writes, (clock.now - start).inSeconds)
}

extension Duration {
  var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The median of a sample (0 when empty).
func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// CPU seconds (user + system) this process used so far.
func processCPUSeconds() -> Double {
  var usage = rusage()
  #if os(Linux)
  getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
  getrusage(RUSAGE_SELF, &usage)
  #endif
  let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// CPU seconds (user + system) the server's processes used so far: the postmaster with the children it
/// reaped, and every child still running (`/proc/PID/stat`).
func serverCPUSeconds(dataDirectory: String) -> Double? {
  guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
    let line = text.split(separator: "\n").first, let postmaster = Int(line)
  else { return nil }
  let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
  var total = 0.0
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  for entry in entries {
    guard let pid = Int(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { continue }
    // After "pid (comm)": state, ppid, … utime (14th field), stime, cutime, cstime.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 14, let parent = Int(fields[1]) else { continue }
    let value = { (index: Int) in Double(fields[index]) ?? 0 }
    if pid == postmaster {
      total += (value(11) + value(12) + value(13) + value(14)) / ticks
    } else if parent == postmaster {
      total += (value(11) + value(12)) / ticks
    }
  }
  return total
}

/// A copy of this program running as a replica (`--replica-child`), driven line by line: it prints
/// `ready`, then for each `CONTENDER SECONDS` it is sent, `WRITES SECONDS CPU-SECONDS`; any other line ends it.
final class ChildProcess {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffer = Data()

  init(arguments: [String]) throws {
    process.executableURL = URL(fileURLWithPath: Self.executable)
    process.arguments = arguments
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  func send(_ line: String) throws {
    try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
  }

  /// The next line the child printed (blocking).
  func readLine() throws -> String {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        return line
      }
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { throw BenchError("a replica process ended early") }
      buffer.append(chunk)
    }
  }

  /// Tells the child to end (a line that is no command, then the end of its input) and waits for it.
  func finish() {
    try? send("quit")
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  private static var executable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
  }
}

struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
