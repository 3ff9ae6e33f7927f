import Foundation
import PersistentLiveData

/// Issue 42: collections, at 10, 1,000, 10,000 and 100,000 members.
///
/// - **Writing one member** of an open collection vs writing one plain key of a store as large (the same
///   keys, no live collection), alternated round by round; beside them, the same change kept as one
///   whole-list value (`[id: Item]`), which re-encodes the list at every write. Goal: member / plain
///   ≤ 1.2x at every size.
/// - **Opening** a collection vs raw SQLite reading the same rows (the newest version of each member,
///   by the same range skip-scan) and decoding them with Foundation's `JSONDecoder`. Goal: ≤ 1.1x.
///   Memory per live member: the process's resident size before and after the open.
/// - **Another process's change to one member**: a child (`pld-bench --external-writer`) sets one member
///   70–100 ms apart; this process's CPU per commit and the delay to the collection's main-actor
///   observer. Goal: flat from 10 to 100,000 members (≤ 1.5x), p50 ≤ 1 ms.
@MainActor
struct CollectionBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var sizes: [Int] { quick ? [10, 1_000] : [10, 1_000, 10_000, 100_000] }

  struct Item: Codable, Sendable, Equatable {
    var title: String
    var done: Bool
    var rank: Int
  }

  static func item(_ index: Int) -> Item {
    Item(title: "Item number \(index) of the benchmark's list", done: index % 3 == 0, rank: index)
  }

  static func id(_ index: Int) -> String { "item-\(index)" }

  func run(_ report: Report) async throws {
    try writes(report)
    try open(report)
    try await external(report)
  }

  /// Fills `store` with `count` members of `n`, 10,000 per transaction.
  private func fill(_ store: PersistentStore, count: Int) throws {
    let filler = try store.collection("n", of: Item.self)
    var next = 0
    while next < count {
      let end = min(count, next + 10_000)
      try store.transaction {
        for index in next..<end { try filler.set(Self.item(index), for: Self.id(index)) }
      }
      next = end
    }
  }

  // MARK: Writing one member

  private func writes(_ report: Report) throws {
    var section = Section(
      "collections: writing one member vs one plain key (issue 42: member/plain ≤ 1.2x at every size)",
      header: [
        "members", "durability", "member p50 µs", "plain p50 µs", "member/plain p50", "member/plain time",
        "logged/plain p50", "raw member/plain p50", "raw member/plain time", "whole list p50 µs",
      ])
    for durability in [Durability.normal, .full] {
      for size in sizes {
        try writes(size: size, durability: durability, section: &section, report)
      }
    }
    section.notes = [
      "member: set(_:for:) of one member of an open collection of N members; plain: set of a plain key in a",
      "store holding the same N members; logged: the member's key written as a plain key there (no live",
      "collection: the collection log's row alone); raw member/plain: raw SQLite writing the member's key and a",
      "plain key into a file the library made (its triggers firing): the log row's cost with no library at all.",
      "Alternating rounds; .normal 15 × 400 writes, .full 9 × 60.",
      "whole list: the same change kept as one [id: Item] value of N entries, written whole (the list in one value).",
    ]
    report.print(section)
  }

  private func writes(
    size: Int, durability: Durability, section: inout Section, _ report: Report
  ) throws {
    let full = durability == .full
    let rounds = quick ? 2 : (full ? 9 : 15)
    let writesPerRound = quick ? 20 : (full ? 60 : 400)
    let memberPath = try scratch.freshFile("collection-member.db")
    let memberStore = try PersistentStore(path: memberPath, options: StoreOptions(durability: durability))
    try fill(memberStore, count: size)
    let members = try memberStore.collection("n", of: Item.self)
    var memberCounter = 0
    let member = Writer(name: "member", path: memberPath) {
      memberCounter += 1
      try members.set(Self.item(memberCounter), for: Self.id(size / 2))
    }

    let plainPath = try scratch.freshFile("collection-plain.db")
    let plainStore = try PersistentStore(path: plainPath, options: StoreOptions(durability: durability))
    try fill(plainStore, count: size)
    let plainKey = try plainStore.liveData("plain", default: Self.item(0))
    var plainCounter = 0
    let plain = Writer(name: "plain", path: plainPath) {
      plainCounter += 1
      try plainKey.set(Self.item(plainCounter))
    }
    // A member's key written as a plain key, with no live collection: what the log's row costs.
    let loggedKey = try plainStore.liveData("n/" + Self.id(size / 2), default: Self.item(0))
    var loggedCounter = 0
    let logged = Writer(name: "logged", path: plainPath) {
      loggedCounter += 1
      try loggedKey.set(Self.item(loggedCounter))
    }

    // Raw SQLite on a file the library made, with collection "n" recorded: the same key and a plain key
    // written by hand (max(version) + INSERT), the collection log's trigger firing for the member.
    let rawPath = try scratch.freshFile("collection-raw.db")
    do {
      let rawStore = try PersistentStore(path: rawPath, options: StoreOptions(durability: durability))
      try fill(rawStore, count: size)
      try rawStore.close()
    }
    let raw = try RawVersionedStore(path: rawPath, synchronous: full ? "FULL" : "NORMAL", table: "pld_values")
    var rawCounter = 0
    let rawMember = Writer(name: "raw member", path: rawPath) {
      rawCounter += 1
      try raw.set(Self.item(rawCounter), key: "n/" + Self.id(size / 2))
    }
    let rawPlain = Writer(name: "raw plain", path: rawPath) {
      rawCounter += 1
      try raw.set(Self.item(rawCounter), key: "plain")
    }

    let results = try measureWrites(
      [member, plain, logged, rawMember, rawPlain], rounds: rounds, writesPerRound: writesPerRound,
      warmUp: quick ? 5 : 30)
    try BenchmarkError.expect(
      members[Self.id(size / 2)] == Self.item(memberCounter), "the collection follows its member's writes")

    // The same change kept as one value: the whole list re-encoded and stored at every write.
    let wholePath = try scratch.freshFile("collection-whole.db")
    let wholeStore = try PersistentStore(path: wholePath, options: StoreOptions(durability: durability))
    var list = Dictionary(uniqueKeysWithValues: (0..<size).map { (Self.id($0), Self.item($0)) })
    let whole = try wholeStore.liveData("list", default: [String: Item]())
    try whole.set(list)
    var wholeLatencies: [Double] = []
    for round in 0..<max(5, min(100, 200_000 / max(size, 1))) {
      list[Self.id(size / 2)] = Self.item(round)
      let start = MonotonicClock.now()
      try whole.set(list)
      wholeLatencies.append(MonotonicClock.nanoseconds(since: start))
    }
    let wholeP50 = Summary(wholeLatencies).median

    let ratios = Section.ratios(results[0], results[1])
    let loggedRatio = results[2].latency.median / results[1].latency.median
    let rawRatios = Section.ratios(results[3], results[4])
    let mode = full ? "full" : "normal"
    section.add(
      Format.count(size), mode, Format.value(results[0].latency.median / 1_000),
      Format.value(results[1].latency.median / 1_000), Format.ratio(ratios.p50), Format.ratio(ratios.time),
      Format.ratio(loggedRatio), Format.ratio(rawRatios.p50), Format.ratio(rawRatios.time),
      Format.value(wholeP50 / 1_000))
    let name = "\(size) members \(mode)"
    report.recordWrites("collections", "member \(name)", results[0], baseline: results[1])
    report.recordWrites("collections", "plain \(name)", results[1], baseline: nil)
    report.record("collections", name, "memberToPlainP50", ratios.p50, unit: "x")
    report.record("collections", name, "memberToPlainTime", ratios.time, unit: "x")
    report.record("collections", name, "loggedToPlainP50", loggedRatio, unit: "x")
    report.record("collections", name, "rawMemberToRawPlainP50", rawRatios.p50, unit: "x")
    report.record("collections", name, "rawMemberToRawPlainTime", rawRatios.time, unit: "x")
    report.record("collections", name, "wholeListP50", wholeP50 / 1_000, unit: "µs")
    for store in [memberStore, plainStore, wholeStore] { try store.close() }
    for path in [memberPath, plainPath, wholePath, rawPath] { scratch.remove(database: path) }
  }

  // MARK: Opening

  private func open(_ report: Report) throws {
    var section = Section(
      "collections: opening N members vs raw SQLite reading and decoding the same rows (issue 42: ≤ 1.1x)",
      header: ["members", "open ms", "raw ms", "open/raw", "KB per live member"])
    let rounds = quick ? 2 : 7
    for size in sizes {
      let path = try scratch.freshFile("collection-open.db")
      do {
        let store = try PersistentStore(path: path)
        try fill(store, count: size)
        // Other keys around the range: never read by either.
        for index in 0..<1_000 { try store.liveData("other-\(index)", default: 0).set(index) }
        try store.close()
      }
      var opens: [Double] = []
      var raws: [Double] = []
      var residentGrowth: [Double] = []
      for _ in 0..<rounds {
        // Alternated; each on a connection of its own.
        let store = try PersistentStore(path: path)
        let residentBefore = residentMegabytes() ?? 0
        let start = MonotonicClock.now()
        let collection = try store.collection("n", of: Item.self)
        opens.append(MonotonicClock.nanoseconds(since: start))
        residentGrowth.append(((residentMegabytes() ?? 0) - residentBefore) * 1_048_576)
        try BenchmarkError.expect(
          collection.value.count == size, "opened \(collection.value.count) of \(size)")
        try store.close()

        let database = try RawDatabase(path: path)
        let rawStart = MonotonicClock.now()
        let values = try RawRestore.members(Item.self, prefix: "n/", upper: "n0", in: database)
        raws.append(MonotonicClock.nanoseconds(since: rawStart))
        try BenchmarkError.expect(values.count == size, "raw read \(values.count) of \(size)")
      }
      let open = Summary(opens).median
      let raw = Summary(raws).median
      let perMember = Summary(residentGrowth).median / Double(size) / 1_024
      section.add(
        Format.count(size), Format.value(open / 1e6), Format.value(raw / 1e6), Format.ratio(open / raw),
        Format.value(perMember))
      let name = "\(size) members"
      report.record("collections-open", name, "openToRaw", open / raw, unit: "x")
      report.record("collections-open", name, "open", open / 1e6, unit: "ms")
      report.record("collections-open", name, "kbPerMember", perMember, unit: "KB")
      scratch.remove(database: path)
    }
    section.notes = [
      "open: store.collection(\"n\", of: Item.self) on a store holding the N members and 1,000 other keys;",
      "raw: the same skip-scan of the key range and JSONDecoder; medians of \(rounds) alternating rounds.",
      "KB per live member: the growth of the resident size across the open (dictionary, ids, versions).",
    ]
    report.print(section)
  }

  // MARK: Another process's change

  private func external(_ report: Report) async throws {
    var section = Section(
      "collections: another process's change to one member (issue 42: flat 10 → 100,000 ≤ 1.5x, p50 ≤ 1 ms)",
      header: ["members", "writes", "CPU per commit ms", "vs 10 members", "delay p50 ms", "delay p99 ms"])
    let writes = quick ? 10 : 40
    var baseline: Double?
    for size in sizes {
      let path = try scratch.freshFile("collection-external.db")
      let store = try PersistentStore(path: path)
      try fill(store, count: size)
      let members = try store.collection("n", of: Item.self)
      let stampKey = "n/" + Self.id(0)
      final class Sink {
        var latencies: [Double] = []
        var last = 0
      }
      let sink = Sink()
      let observer = members.observeForever(receiveCurrent: false) { value in
        guard let stamp = value[Self.id(0)]?.rank, stamp != sink.last else { return }
        sink.last = stamp
        sink.latencies.append(Double(MonotonicClock.now() &- UInt64(max(0, stamp))))
      }
      defer { observer.cancel() }
      let cpuBefore = cpuSeconds()
      let writer = Process()
      writer.executableURL = URL(fileURLWithPath: Self.executable)
      writer.arguments = ["--external-writer", path, "\(writes)", "\(size)"]
      writer.environment = ProcessInfo.processInfo.environment.merging(["PLD_BENCH_STAMP_KEY": stampKey]) {
        $1
      }
      try writer.run()
      while writer.isRunning { try await Task.sleep(for: .milliseconds(20)) }
      try BenchmarkError.expect(
        writer.terminationStatus == 0, "the external writer exited with \(writer.terminationStatus)")
      let deadline = MonotonicClock.now() + 3_000_000_000
      while sink.latencies.count < writes, MonotonicClock.now() < deadline {
        try await Task.sleep(for: .milliseconds(1))
      }
      let cpu = (cpuSeconds() - cpuBefore) * 1e9
      try BenchmarkError.expect(
        sink.latencies.count == writes, "\(size) members: \(sink.latencies.count) of \(writes) delivered")
      let perCommit = cpu / Double(writes)
      baseline = baseline ?? perCommit
      let summary = Summary(sink.latencies)
      section.add(
        Format.count(size), Format.count(writes), Format.value(perCommit / 1e6),
        Format.ratio(perCommit / (baseline ?? perCommit)), Format.value(summary.median / 1e6),
        Format.value(summary.percentile(99) / 1e6))
      let name = "\(size) members"
      report.record("collections-external", name, "cpu per commit", perCommit / 1e6, unit: "ms")
      report.record("collections-external", name, "p50", summary.median / 1e6, unit: "ms")
      report.record("collections-external", name, "p99", summary.percentile(99) / 1e6, unit: "ms")
      try store.close()
      scratch.remove(database: path)
    }
    section.notes = [
      "CPU: this process's user + system time while a child made \(writes) .normal writes of one member 70–100 ms",
      "apart, per write (idle work included). Delay: from just before the child's set to the collection's observer.",
    ]
    report.print(section)
  }

  private static var executable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
  }
}

extension RawRestore {
  /// The newest row of every key in `(prefix, upper)`, by a skip-scan of the primary key, decoded.
  static func members<Value: Decodable>(
    _ type: Value.Type, prefix: String, upper: String, in database: RawDatabase
  ) throws -> [String: Value] {
    let statement = try database.prepare(
      """
      WITH RECURSIVE k(key) AS (
        SELECT min(key) FROM pld_values WHERE key > ?1 AND key < ?2
        UNION ALL
        SELECT (SELECT min(key) FROM pld_values WHERE key > k.key AND key < ?2) FROM k WHERE k.key IS NOT NULL
      )
      SELECT v.key, v.payload FROM k JOIN pld_values v ON v.key = k.key
        AND v.version = (SELECT max(version) FROM pld_values WHERE key = k.key)
      WHERE k.key IS NOT NULL
      """)
    try statement.bind(prefix, at: 1)
    try statement.bind(upper, at: 2)
    let decoder = JSONDecoder()
    var values: [String: Value] = [:]
    while try statement.step() {
      values[String(statement.text(0).dropFirst(prefix.count))] = try decoder.decode(
        type, from: statement.data(1))
    }
    return values
  }
}
