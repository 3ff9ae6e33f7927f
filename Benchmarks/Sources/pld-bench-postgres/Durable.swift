import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO

/// `pld-bench-postgres --durable`: how the shared store's throughput grows with writers and replicas on
/// a durable server (fsync, synchronous_commit and full_page_writes on, a cluster on the real disk), side
/// by side with raw postgres-nio writing the same rows with and without NOTIFY; and what a replica
/// holding many live keys costs while nothing is written.
@MainActor
enum DurableBenchmark {
  struct Settings {
    var rounds: Int
    var seconds: Double
    var warmUp: Double
    var writers: [Int]
    var replicas: [Int]
    var tasksPerReplica: Int
    var keys: Int
    var idleKeys: Int
    var idleSeconds: Double

    init(quick: Bool) {
      rounds = quick ? 1 : 4
      seconds = quick ? 0.3 : 3
      warmUp = quick ? 0.1 : 0.5
      writers = [1, 4, 16, 64]
      replicas = quick ? [1, 4] : [1, 4, 16]
      tasksPerReplica = 8
      keys = quick ? 200 : 1_000
      idleKeys = quick ? 1_000 : 10_000
      idleSeconds = quick ? 1 : 10
      // PLD_BENCH_REPLICAS_ONLY=4 measures the replica line 4 × 8 alone (a before/after comparison of one
      // figure): no writers table, no idle cost.
      if let only = ProcessInfo.processInfo.environment["PLD_BENCH_REPLICAS_ONLY"].flatMap(Int.init) {
        writers = []
        replicas = [only]
        idleSeconds = 0
      }
      // PLD_BENCH_ROUNDS and PLD_BENCH_SECONDS: more, shorter rounds, for a before/after of one line on a
      // noisy machine (the ratio is the median of the rounds').
      if let count = ProcessInfo.processInfo.environment["PLD_BENCH_ROUNDS"].flatMap(Int.init) {
        rounds = count
      }
      if let each = ProcessInfo.processInfo.environment["PLD_BENCH_SECONDS"].flatMap(Double.init) {
        seconds = each
      }
      // PLD_BENCH_WRITERS_ONLY=1 measures the line of one replica with that many writers alone.
      if let only = ProcessInfo.processInfo.environment["PLD_BENCH_WRITERS_ONLY"].flatMap(Int.init) {
        writers = [only]
        replicas = []
        idleSeconds = 0
      }
    }
  }

  /// One line of a scaling table: each contender's writes per second in each round, and each round's
  /// ratios.
  struct Row {
    let label: String
    let count: Int
    var rates: [Contender: [Double]] = [:]
    var storeRatios: [Double] = []
    var notifyRatios: [Double] = []
    /// The store against raw postgres-nio sending the same statement prepared.
    var preparedRatios: [Double] = []
    /// Over the measured rounds: writes, and CPU seconds of the writing processes and of the server.
    var writes: [Contender: Double] = [:]
    var clientCPU: [Contender: Double] = [:]
    var serverCPU: [Contender: Double] = [:]

    func rate(_ contender: Contender) -> Double { median(rates[contender] ?? []) }

    /// CPU µs per write of the writing processes and of the server.
    func cpuPerWrite(_ contender: Contender) -> (client: Double, server: Double) {
      let writes = max(1, self.writes[contender] ?? 0)
      return ((clientCPU[contender] ?? 0) / writes * 1e6, (serverCPU[contender] ?? 0) / writes * 1e6)
    }
  }

  /// One contender's run: writes per second, writes, and the CPU seconds its writing processes used.
  struct Sample {
    let rate: Double
    let writes: Double
    let clientCPU: Double
  }

  static func run(server: PostgresTestServer, quick: Bool, jsonPath: String?) async throws {
    let settings = Settings(quick: quick)
    let started = Date()
    // A replica process that ended early must fail the run, not kill it with SIGPIPE unexplained.
    signal(SIGPIPE, SIG_IGN)
    try printHeader(server: server, settings: settings)
    let writers = try await writersTable(server: server, settings: settings)
    let replicas = try await replicasTable(server: server, settings: settings)
    let idle = settings.idleSeconds > 0 ? try await idleCost(server: server, settings: settings) : [:]
    let serverTotal = server.dataDirectory.flatMap { serverCPUSeconds(dataDirectory: $0) } ?? 0
    print(
      "Durable run: \(String(format: "%.0f", Date().timeIntervalSince(started))) s; the server's processes used "
        + "\(String(format: "%.1f", serverTotal)) s of CPU in all.")
    if let jsonPath {
      let rows = { (rows: [Row], name: String) in
        rows.map { row -> [String: Any] in
          [
            name: row.count, "store": row.rate(.store), "raw": row.rate(.raw), "rawNotify": row.rate(.notify),
            "rawPrepared": row.rate(.prepared), "storeOverRaw": median(row.storeRatios),
            "rawNotifyOverRaw": median(row.notifyRatios), "storeOverRawPrepared": median(row.preparedRatios),
            "cpuMicrosecondsPerWrite": Dictionary(
              uniqueKeysWithValues: Contender.allCases.map { contender in
                let cpu = row.cpuPerWrite(contender)
                return (contender.rawValue, ["client": cpu.client, "server": cpu.server])
              }),
          ]
        }
      }
      let document: [String: Any] = [
        "date": ISO8601DateFormatter().string(from: started), "quick": quick,
        "writers": rows(writers, "writers"), "replicas": rows(replicas, "replicas"),
        "tasksPerReplica": settings.tasksPerReplica, "idle": idle,
      ]
      let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
      try data.write(to: URL(fileURLWithPath: jsonPath))
    }
  }

  // MARK: Header

  private static func printHeader(server: PostgresTestServer, settings: Settings) throws {
    let show = { (setting: String) in
      (try? server.psql("SHOW \(setting)", database: "postgres"))?.trimmingCharacters(
        in: .whitespacesAndNewlines)
        ?? "?"
    }
    let directory = server.dataDirectory ?? "?"
    let filesystem = Self.filesystem(of: directory)
    guard filesystem != "tmpfs" else {
      throw BenchError(
        "the durable server's directory \(directory) is on a tmpfs: give PLD_BENCH_PG_ROOT a disk")
    }
    print("# PersistentLiveDataPostgres benchmark: durable server\n")
    print("- Date: \(ISO8601DateFormatter().string(from: Date()))")
    print("- PostgreSQL \(show("server_version")): fsync=\(show("fsync")), ")
    print(
      "  synchronous_commit=\(show("synchronous_commit")), full_page_writes=\(show("full_page_writes")), "
        + "wal_sync_method=\(show("wal_sync_method"))")
    print(
      "- Cluster: \(directory) (\(filesystem)); Unix socket; this process and the server share the machine")
    print(
      "- \(settings.rounds) round(s) of \(settings.seconds) s per contender and line, contenders alternating "
        + "round by round (after a \(settings.warmUp) s warm-up each); writes/s is the median round\n")
  }

  private static func filesystem(of path: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/findmnt")
    process.arguments = ["-n", "-o", "FSTYPE", "-T", path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return "unknown" }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return text.isEmpty ? "unknown" : text
  }

  // MARK: Comparing

  /// Measures each contender `rounds` times, alternating, and the server's CPU meanwhile.
  private static func compare(
    label: String, count: Int, settings: Settings, server: PostgresTestServer,
    _ measure: (Contender, Double) async throws -> Sample
  ) async throws -> Row {
    for contender in Contender.measured { _ = try await measure(contender, settings.warmUp) }
    var row = Row(label: label, count: count)
    let serverCPU = { server.dataDirectory.flatMap { serverCPUSeconds(dataDirectory: $0) } ?? 0 }
    for round in 0..<settings.rounds {
      var rates: [Contender: Double] = [:]
      for contender in Contender.order(round: round) {
        let before = serverCPU()
        let sample = try await measure(contender, settings.seconds)
        row.serverCPU[contender, default: 0] += serverCPU() - before
        row.clientCPU[contender, default: 0] += sample.clientCPU
        row.writes[contender, default: 0] += sample.writes
        rates[contender] = sample.rate
      }
      for (contender, rate) in rates { row.rates[contender, default: []].append(rate) }
      let raw = rates[.raw] ?? 0
      if raw > 0 {
        row.storeRatios.append((rates[.store] ?? 0) / raw)
        row.notifyRatios.append((rates[.notify] ?? 0) / raw)
      }
      if let prepared = rates[.prepared], prepared > 0 {
        row.preparedRatios.append((rates[.store] ?? 0) / prepared)
      }
    }
    return row
  }

  private static func printTable(_ title: String, first: String, rows: [Row], notes: [String]) {
    let number = { (value: Double) in String(format: "%.0f", value) }
    let ratio = { (value: Double) in String(format: "%.2f×", value) }
    print("## \(title)\n")
    print(
      "| \(first) | SharedLiveData.set | raw, no NOTIFY | raw + NOTIFY in the statement | raw prepared, no NOTIFY "
        + "| store / raw no NOTIFY | raw + NOTIFY / raw no NOTIFY | store / raw prepared |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows {
      print(
        "| \(row.label) | \(number(row.rate(.store))) | \(number(row.rate(.raw))) | \(number(row.rate(.notify))) "
          + "| \(number(row.rate(.prepared))) | \(ratio(median(row.storeRatios))) "
          + "| \(ratio(median(row.notifyRatios))) | \(ratio(median(row.preparedRatios))) |")
    }
    print("")
    print("CPU µs per write (writing processes / server; over the measured rounds):\n")
    print("| \(first) | SharedLiveData.set | raw, no NOTIFY | raw + NOTIFY in the statement | raw prepared |")
    print("|---|---|---|---|---|")
    for row in rows {
      let cells = Contender.allCases.map { contender in
        let cpu = row.cpuPerWrite(contender)
        return "\(number(cpu.client)) / \(number(cpu.server))"
      }
      print("| \(row.label) | \(cells.joined(separator: " | ")) |")
    }
    print("")
    for note in notes { print(note) }
    print("")
  }

  // MARK: Writers

  /// Writers 1, 4, 16, 64 in this process: one replica (a running store) and one raw client, each pool
  /// up to 72 connections, every task writing its own share of the keys in turn (no key is written by
  /// two tasks).
  private static func writersTable(server: PostgresTestServer, settings: Settings) async throws -> [Row] {
    var configuration = try await server.makeDatabase()
    configuration.options.maximumConnections = 72
    let replica = Replica(configuration)
    let raw = RawWriter(configuration)
    var live: [SharedLiveData<Int>] = []
    for index in 0..<settings.keys {
      live.append(try await replica.store.liveData("w-\(index)", default: 0))
    }
    let rawKeys = try await raw.keys((0..<settings.keys).map { "raw-w-\($0)" })
    var rows: [Row] = []
    for writers in settings.writers {
      let storeByTask = (0..<writers).map { task in
        stride(from: task, to: live.count, by: writers).map { live[$0] }
      }
      let rawByTask = (0..<writers).map { task in
        stride(from: task, to: rawKeys.count, by: writers).map { rawKeys[$0] }
      }
      let row = try await compare(label: "\(writers)", count: writers, settings: settings, server: server) {
        contender, seconds in
        let cpu = processCPUSeconds()
        let (writes, elapsed) = try await measureWrites(seconds: seconds, tasks: writers) { task, iteration in
          switch contender {
          case .store:
            let keys = storeByTask[task]
            try await keys[iteration % keys.count].set(iteration)
          case .raw, .notify:
            let keys = rawByTask[task]
            _ = try await raw.write(
              keys[iteration % keys.count], payload: String(iteration), notify: contender == .notify)
          case .prepared:
            let keys = rawByTask[task]
            _ = try await raw.writePrepared(keys[iteration % keys.count], payload: String(iteration))
          }
        }
        return Sample(
          rate: Double(writes) / elapsed, writes: Double(writes), clientCPU: processCPUSeconds() - cpu)
      }
      rows.append(row)
      progress("writers \(writers): done")
    }
    await replica.stop()
    await raw.stop()
    printTable(
      "Writers on one replica (this process; writes/s)", first: "writers", rows: rows,
      notes: [
        "Each writer is a task calling `set` (or sending the raw statement) on its own keys in turn, \(settings.keys)",
        "keys in all; the store and the raw client each have a pool of up to 72 connections. The raw statement",
        "is the store's (heads upsert + value insert, one statement), sent as a query; \"+ NOTIFY\" adds `pg_notify`",
        "inside it, as the store's writes did before issue 27; \"raw prepared\" sends it as a prepared statement, as",
        "the store now does. The store notifies after the commit, gathering the notifications of concurrent writes.",
      ])
    return rows
  }

  // MARK: Replicas

  /// Replicas 1, 4, 16 as separate processes (`--replica-child`), each with its own client, running
  /// store and raw client, `tasksPerReplica` tasks each.
  private static func replicasTable(server: PostgresTestServer, settings: Settings) async throws -> [Row] {
    guard case .socket(let socket) = server.endpoint else {
      throw BenchError("the replica processes need the server's Unix socket")
    }
    let configuration = try await server.makeDatabase()
    guard let database = configuration.database else { throw BenchError("no database name") }
    // The schema, before the raw contenders write.
    let setup = Replica(configuration)
    _ = try await setup.store.liveData("schema", default: 0)
    await setup.stop()
    var rows: [Row] = []
    for replicas in settings.replicas {
      let tasks = settings.tasksPerReplica
      let keysPerTask = max(1, settings.keys / (replicas * tasks))
      let children = try (0..<replicas).map { index in
        try ChildProcess(arguments: [
          "--replica-child", socket, server.username, database, "\(index)", "\(tasks)", "\(keysPerTask)",
        ])
      }
      defer { children.forEach { $0.finish() } }
      for child in children {
        let line = try child.readLine()
        guard line == "ready" else { throw BenchError("a replica process said \(line)") }
      }
      let row = try await compare(
        label: "\(replicas) × \(tasks)", count: replicas, settings: settings, server: server
      ) { contender, seconds in
        for child in children { try child.send("\(contender.rawValue) \(seconds)") }
        var rate = 0.0
        var total = 0.0
        var cpu = 0.0
        for child in children {
          let parts = try child.readLine().split(separator: " ")
          guard parts.count == 3, let writes = Double(parts[0]), let elapsed = Double(parts[1]), elapsed > 0,
            let used = Double(parts[2])
          else {
            throw BenchError("a replica process answered \(parts)")
          }
          rate += writes / elapsed
          total += writes
          cpu += used
        }
        return Sample(rate: rate, writes: total, clientCPU: cpu)
      }
      rows.append(row)
      progress("replicas \(replicas): done")
    }
    printTable(
      "Replica processes × tasks (writes/s, summed over the processes)", first: "replicas × tasks",
      rows: rows,
      notes: [
        "Each replica is a separate process (this program, `--replica-child`): its own PostgresClient and running",
        "PostgresStore (listener and periodic catch-up included), holding its own tasks' keys live, and a raw",
        "postgres-nio client beside it. Each task writes its own keys in turn (\(settings.keys) keys in all, at least",
        "one per task); the parent starts a contender in every process at once and adds up their writes/s.",
      ])
    if let headline = rows.first(where: { $0.count == 4 }) {
      print(
        "Goal (issue 27): 4 replica processes × \(settings.tasksPerReplica) tasks ≥ 0.90× raw postgres-nio without "
          + "NOTIFY: \(String(format: "%.2f", median(headline.storeRatios)))× (per round: "
          + headline.storeRatios.map { String(format: "%.2f", $0) }.joined(separator: ", ")
          + "); against raw "
          + "postgres-nio sending the statement prepared, as the store does: "
          + "\(String(format: "%.2f", median(headline.preparedRatios)))× (per round: "
          + headline.preparedRatios.map { String(format: "%.2f", $0) }.joined(separator: ", ") + ")\n")
    }
    return rows
  }

  // MARK: Idle

  /// A replica holding `idleKeys` live keys while nothing is written: this process's CPU and the
  /// server's per second, then the same with the statement the catch-up sent every second before the
  /// change feed (every live key's head, one statement) sent by a raw client beside it.
  private static func idleCost(
    server: PostgresTestServer, settings: Settings
  ) async throws -> [String: Double] {
    guard let dataDirectory = server.dataDirectory else { return [:] }
    let configuration = try await server.makeDatabase()
    let replica = Replica(configuration)
    _ = try await replica.store.liveData("schema", default: 0)
    try await replica.client.query(
      PostgresQuery(
        unsafeSQL: """
          WITH k AS (
            SELECT 'idle-' || i AS key, encode(sha256(convert_to('idle-' || i, 'UTF8')), 'hex') AS hash
            FROM generate_series(0, \(settings.idleKeys - 1)) i
          ), heads AS (
            INSERT INTO pld_heads (key_hash, key, version) SELECT hash, key, 1 FROM k
          )
          INSERT INTO pld_values (key_hash, version, payload, schema_version) SELECT hash, 1, '0', 1 FROM k
          """))
    let store = replica.store
    let keys = settings.idleKeys
    let live = try await withThrowingTaskGroup(of: [SharedLiveData<Int>].self) { group in
      for part in 0..<8 {
        group.addTask {
          var data: [SharedLiveData<Int>] = []
          for index in stride(from: part, to: keys, by: 8) {
            data.append(try await store.liveData("idle-\(index)", default: -1))
          }
          return data
        }
      }
      var all: [SharedLiveData<Int>] = []
      for try await part in group { all += part }
      return all
    }
    guard live.count == keys, live.allSatisfy({ $0.version == 1 }) else {
      throw BenchError("the idle replica did not read its \(keys) keys")
    }
    // The first periodic look compares every live key; later ones follow the change feed.
    try await Task.sleep(for: .seconds(2.5))
    let seconds = settings.idleSeconds
    let measure = { () async throws -> (process: Double, server: Double) in
      let process = processCPUSeconds()
      let server = serverCPUSeconds(dataDirectory: dataDirectory) ?? 0
      try await Task.sleep(for: .milliseconds(Int(seconds * 1_000)))
      return (
        (processCPUSeconds() - process) / seconds * 1_000,
        ((serverCPUSeconds(dataDirectory: dataDirectory) ?? 0) - server) / seconds * 1_000
      )
    }
    let idle = try await measure()
    // The every-key comparison the catch-up sent each second before the change feed, from a raw client.
    let raw = RawWriter(configuration)
    var hashes: [String] = []
    for try await hash in try await raw.client.query("SELECT key_hash FROM pld_heads WHERE key LIKE 'idle-%'")
      .decode(String.self)
    {
      hashes.append(hash)
    }
    let allHashes = hashes
    let comparing = Task {
      while !Task.isCancelled {
        let rows = try await raw.client.query(
          "SELECT key_hash, version FROM pld_heads WHERE key_hash = ANY(\(allHashes))")
        for try await _ in rows.decode((String, Int64).self) {}
        try await Task.sleep(for: .seconds(1))
      }
    }
    try await Task.sleep(for: .milliseconds(200))
    let compared = try await measure()
    comparing.cancel()
    _ = await comparing.result
    withExtendedLifetime(live) {}
    await raw.stop()
    await replica.stop()
    let format = { (value: Double) in String(format: "%.1f", value) }
    print("## Idle catch-up at \(keys) live keys (CPU ms per second, \(format(seconds)) s each)\n")
    print("| | this process | server (all postgres processes) |")
    print("|---|---|---|")
    print(
      "| replica idle (catch-up follows the change feed) | \(format(idle.process)) | \(format(idle.server)) |"
    )
    print(
      "| + the old every-key comparison each second (raw, beside it) | \(format(compared.process)) "
        + "| \(format(compared.server)) |")
    print("")
    print("CPU from getrusage (this process) and /proc/PID/stat utime+stime (the postmaster with its reaped")
    print(
      "children, and every backend). The second line adds, from a raw client in this process, the statement")
    print(
      "the periodic catch-up sent every second before the change feed (`key_hash = ANY(\(keys) hashes)` on")
    print("pld_heads), without the client-side hashing of every key it also did.\n")
    return [
      "liveKeys": Double(keys), "seconds": seconds, "processMsPerSecond": idle.process,
      "serverMsPerSecond": idle.server, "oldComparisonProcessMsPerSecond": compared.process,
      "oldComparisonServerMsPerSecond": compared.server,
    ]
  }
}

/// A progress line on standard error, out of the tables.
func progress(_ line: String) {
  FileHandle.standardError.write(Data("pld-bench-postgres: \(line)\n".utf8))
}
