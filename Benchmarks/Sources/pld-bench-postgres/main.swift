import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO

// pld-bench-postgres: the shared store against raw postgres-nio, in one process, on one server.
//
// 1. `set`: SharedLiveData.set against postgres-nio sending the same work itself (heads upsert, value
//    insert, NOTIFY, one transaction), interleaved rounds on the same client.
// 2. Replica to replica: a write on replica A until the observer on replica B is called (main actor).
// 3. A server restart: time until replica B holds what replica A wrote after the restart.
// 4. Collections: a member's set on A (against raw postgres-nio) and a member written on A until B's
//    collection observer runs, with 10 and 100,000 members: both must stay flat.
//
// The server is a throwaway one started here (PostgreSQL installed), or PLD_POSTGRES_URL (no restart
// then). `--quick` runs a few iterations only, to check that it works.
//
// `--durable` runs the scaling tables instead (Durable.swift) on a durable server it starts itself (fsync,
// synchronous_commit and full_page_writes on) in a folder on the disk: PLD_BENCH_PG_ROOT, else /var/tmp.
// `--json PATH` (with `--durable`) also writes its figures as JSON, for chart-postgres.py.
// `--cache` runs the local cache's figures instead (Cache.swift): opening from the cache with the server
// halted, time to current after it returns, and what the cache adds to a `set`.
// `--replica-child …` is internal: one replica process of the durable run's replica table.

let arguments = CommandLine.arguments
if let at = arguments.firstIndex(of: "--replica-child") {
  do {
    try await ReplicaChild.run(Array(arguments[(at + 1)...]))
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("pld-bench-postgres --replica-child: \(error)\n".utf8))
    exit(1)
  }
}

let quick = arguments.contains("--quick")
let durable = arguments.contains("--durable")
let jsonPath = arguments.firstIndex(of: "--json").flatMap {
  $0 + 1 < arguments.count ? arguments[$0 + 1] : nil
}
let server: PostgresTestServer
do {
  if durable {
    server = try PostgresTestServer.start(
      durable: true, root: ProcessInfo.processInfo.environment["PLD_BENCH_PG_ROOT"] ?? "/var/tmp")
  } else {
    if ProcessInfo.processInfo.environment["PLD_POSTGRES_URL"] != nil {
      server = try PostgresTestServer.shared()
    } else {
      server = try PostgresTestServer.start()
    }
  }
} catch {
  FileHandle.standardError.write(Data("pld-bench-postgres: \(error)\n".utf8))
  exit(1)
}
defer { server.stop() }

/// Percentiles of a sample, in milliseconds.
func summary(_ samples: [Duration]) -> (p50: Double, p99: Double, mean: Double) {
  let sorted = samples.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3 }
    .sorted()
  guard !sorted.isEmpty else { return (0, 0, 0) }
  let at = { (fraction: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
  return (at(0.5), at(0.99), sorted.reduce(0, +) / Double(sorted.count))
}

func format(_ value: Double) -> String { String(format: "%.3f", value) }

@MainActor
func run() async throws {
  let configuration = try await server.makeDatabase()
  let a = Replica(configuration)
  let b = Replica(configuration)
  let rounds = quick ? 2 : 10
  let perRound = quick ? 50 : 400

  // 1. set against raw postgres-nio.
  let data = try await a.store.liveData("bench", default: 0)
  try await data.set(0)  // the schema exists from here on
  let guarded = try await a.store.liveData("bench-conditional", default: 0)
  try await guarded.set(0)
  var library: [Duration] = []
  var conditional: [Duration] = []
  var raw: [Duration] = []
  var rawVersion: Int64 = 0
  let clock = ContinuousClock()
  let payload = "12345"
  for _ in 0..<rounds {
    for index in 0..<perRound {
      let started = clock.now
      try await data.set(index)
      library.append(clock.now - started)
    }
    for index in 0..<perRound {
      let started = clock.now
      try await guarded.set(index, ifVersion: guarded.version)
      conditional.append(clock.now - started)
    }
    for _ in 0..<perRound {
      let started = clock.now
      rawVersion = try await rawSet(client: a.client, key: "raw", payload: payload)
      raw.append(clock.now - started)
    }
  }
  let (libraryP50, _, libraryMean) = summary(library)
  let (rawP50, _, rawMean) = summary(raw)
  print("# PersistentLiveDataPostgres benchmark\n")
  print("## set (one key, \(library.count) writes each, interleaved rounds; raw version \(rawVersion))\n")
  print("| | p50 ms | mean ms |")
  print("|---|---|---|")
  print("| SharedLiveData.set | \(format(libraryP50)) | \(format(libraryMean)) |")
  print("| raw postgres-nio (upsert + insert + NOTIFY) | \(format(rawP50)) | \(format(rawMean)) |")
  print("| ratio (goal ≤ 1.15×) | \(format(libraryP50 / rawP50))× | \(format(libraryMean / rawMean))× |")
  // Issue 43: the condition rides the write's statement (another shape of the same prepared statement).
  let (conditionalP50, _, conditionalMean) = summary(conditional)
  print("| SharedLiveData.set(_:ifVersion:) | \(format(conditionalP50)) | \(format(conditionalMean)) |")
  print(
    "| conditional / set (goal ≤ 1.02×) | \(format(conditionalP50 / libraryP50))× "
      + "| \(format(conditionalMean / libraryMean))× |\n")

  // 2. Replica to replica.
  let writer = try await a.store.liveData("latency", default: -1)
  let observed = try await b.store.liveData("latency", default: -1)
  // The observer hands each arrival to the loop through a stream: the loop waits without spinning (a
  // spinning main actor would take a core from the server and the other replica on a small machine).
  let (arrivalStream, arrivalSink) = AsyncStream<(Int, ContinuousClock.Instant)>.makeStream()
  let observer = observed.observeForever(receiveCurrent: false) { value in
    arrivalSink.yield((value, clock.now))
  }
  var arrivals = arrivalStream.makeAsyncIterator()
  var latencies: [Duration] = []
  let samples = quick ? 50 : 2_000
  for index in 0..<samples {
    let started = clock.now
    try await writer.set(index)
    while let (value, arrived) = await arrivals.next() {
      if value == index {
        latencies.append(arrived - started)
        break
      }
    }
    try await Task.sleep(for: .milliseconds(1))
  }
  observer.cancel()
  let latency = summary(latencies)
  print("## Replica to replica (write on A until B's observer runs, \(latencies.count) of \(samples))\n")
  print("| p50 ms | p99 ms | mean ms |")
  print("|---|---|---|")
  print("| \(format(latency.p50)) | \(format(latency.p99)) | \(format(latency.mean)) |\n")

  // 4. Collections: the cost of a member's write and of another replica's change, at two sizes.
  try await collections(a: a, b: b, clock: clock)

  // 3. A server restart.
  if server.isOwned {
    var catchUps: [Duration] = []
    let keys = quick ? 3 : 20
    var written: [SharedLiveData<Int>] = []
    var seen: [SharedLiveData<Int>] = []
    for index in 0..<keys {
      written.append(try await a.store.liveData("restart-\(index)", default: 0))
      seen.append(try await b.store.liveData("restart-\(index)", default: 0))
    }
    for round in 1...(quick ? 1 : 5) {
      try await server.restart()
      let restarted = clock.now
      for data in written {
        while true {
          do {
            try await data.set(round)
            break
          } catch {
            try await Task.sleep(for: .milliseconds(2))
          }
        }
      }
      let deadline = clock.now + .seconds(10)
      while !seen.allSatisfy({ $0.value == round }) && clock.now < deadline {
        try await Task.sleep(for: .milliseconds(1))
      }
      catchUps.append(clock.now - restarted)
    }
    let restart = summary(catchUps)
    print("## After a server restart (pg_ctl restart -m fast returned → B holds A's \(keys) new values)\n")
    print("| runs | median ms | worst ms |")
    print("|---|---|---|")
    print(
      "| \(catchUps.count) | \(format(restart.p50)) | \(format(catchUps.map { summary([$0]).p50 }.max() ?? 0)) |"
    )
  }
  await a.stop()
  await b.stop()
}

/// Section 4: collections of 10 and 100,000 members (filled by one statement each), a member's `set` on
/// A interleaved with raw writes, then a member written on A until B's collection observer has it.
@MainActor
func collections(a: Replica, b: Replica, clock: ContinuousClock) async throws {
  print("## Collections (member writes on A; a member written on A until B's collection observer runs)\n")
  print("| members | B opens ms | set p50 ms | raw p50 ms | set / raw | A→B p50 ms | A→B p99 ms |")
  print("|---|---|---|---|---|---|---|")
  for size in quick ? [10, 2_000] : [10, 100_000] {
    let name = "c\(size)"
    let key = "'\(name)/m-' || i"
    _ = try await a.client.query(
      PostgresQuery(
        unsafeSQL: """
          INSERT INTO pld_heads (key_hash, key, version)
          SELECT encode(sha256(convert_to(\(key), 'UTF8')), 'hex'), \(key), 1 FROM generate_series(0, \(size - 1)) i
          """))
    _ = try await a.client.query(
      PostgresQuery(
        unsafeSQL: """
          INSERT INTO pld_values (key_hash, version, payload)
          SELECT encode(sha256(convert_to(\(key), 'UTF8')), 'hex'), 1, i::text FROM generate_series(0, \(size - 1)) i
          """))
    let opening = clock.now
    let onB = try await b.store.collection(name, of: Int.self)
    let opened = clock.now - opening
    let onA = try await a.store.collection(name, of: Int.self)
    precondition(onB.value.count == size && onA.value.count == size, "the collection holds its members")
    var sets: [Duration] = []
    var raws: [Duration] = []
    let perRound = quick ? 20 : 200
    for round in 0..<(quick ? 2 : 5) {
      for index in 0..<perRound {
        let started = clock.now
        try await onA.set(round * perRound + index, for: "m-\(index % size)")
        sets.append(clock.now - started)
      }
      for _ in 0..<perRound {
        let started = clock.now
        _ = try await rawSet(client: a.client, key: "raw-\(name)", payload: "1")
        raws.append(clock.now - started)
      }
    }
    let (arrivalStream, arrivalSink) = AsyncStream<(Int, ContinuousClock.Instant)>.makeStream()
    let observer = onB.observeForever(receiveCurrent: false) { members in
      if let value = members["m-1"] { arrivalSink.yield((value, clock.now)) }
    }
    var arrivals = arrivalStream.makeAsyncIterator()
    var latencies: [Duration] = []
    for index in 0..<(quick ? 50 : 1_000) {
      let marker = 1_000_000 + index
      let started = clock.now
      try await onA.set(marker, for: "m-1")
      while let (value, arrived) = await arrivals.next() {
        if value == marker {
          latencies.append(arrived - started)
          break
        }
      }
      try await Task.sleep(for: .milliseconds(1))
    }
    observer.cancel()
    let set = summary(sets)
    let raw = summary(raws)
    let latency = summary(latencies)
    print(
      "| \(size) | \(format(summary([opened]).p50)) | \(format(set.p50)) | \(format(raw.p50)) "
        + "| \(format(set.p50 / raw.p50))× | \(format(latency.p50)) | \(format(latency.p99)) |")
  }
  print("")
}

/// What a program would write itself with postgres-nio: the same statement the store sends.
func rawSet(client: PostgresClient, key: String, payload: String) async throws -> Int64 {
  let rows = try await client.query(
    """
    WITH head AS (
      INSERT INTO pld_heads AS h (key_hash, key, version) VALUES (\(key), \(key), 1)
      ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
    ), inserted AS (
      INSERT INTO pld_values (key_hash, version, payload, schema_version)
      SELECT \(key), version, \(payload), 1 FROM head RETURNING version, written_at
    ), notified AS (
      SELECT pg_notify('pld_changes', version::text || ' raw k ' || \(key)) FROM inserted
    )
    SELECT inserted.version FROM inserted, notified
    """)
  for try await version in rows.decode(Int64.self) { return version }
  return 0
}

do {
  if durable {
    try await DurableBenchmark.run(server: server, quick: quick, jsonPath: jsonPath)
  } else if arguments.contains("--cache") {
    try await CacheBenchmark.run(server: server, quick: quick)
  } else {
    try await run()
  }
} catch {
  FileHandle.standardError.write(Data("pld-bench-postgres: \(error)\n".utf8))
  server.stop()
  exit(1)
}
