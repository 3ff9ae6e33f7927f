import PersistentLiveData

/// Issue 3: `PersistentLiveData.set` against raw SQLite doing the same work — encode the value as
/// sorted-keys JSON, `BEGIN IMMEDIATE`, read `max(version)`, `INSERT`, `COMMIT` — in both durability
/// modes, for a ~115-byte and a ~10 KB value. Each contender writes one key of its own fresh file.
@MainActor
struct SetBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 9 }

  func run(_ report: Report) throws {
    let small = ValueCycle(Profile.sample)
    let large = ValueCycle(Catalog.sample)
    var section = Section(
      "set: PersistentLiveData.set vs raw SQLite (issue 3: .full ≤ 1.2x, .normal ≤ 1.3x; issue 7: 1.10x)",
      header: Section.latencyHeader(first: "case"))
    try compare(small, durability: .normal, writesPerRound: quick ? 20 : 3_000, section: &section, report)
    try compare(small, durability: .full, writesPerRound: quick ? 20 : 1_200, section: &section, report)
    try compare(large, durability: .normal, writesPerRound: quick ? 10 : 1_200, section: &section, report)
    try compare(large, durability: .full, writesPerRound: quick ? 10 : 1_000, section: &section, report)
    section.notes = [
      "Each pair alternates round by round (\(rounds) rounds); latencies are pooled over the rounds,",
      "writes/s is the median of the rounds. p50 ratio = library p50 / raw p50; time ratio = raw writes/s /",
      "library writes/s (the mean cost ratio, stalls included). Both sides encode inside the timed call.",
    ]
    report.print(section)
  }

  private func compare<Value: Codable & Sendable>(
    _ values: ValueCycle<Value>, durability: Durability, writesPerRound: Int, section: inout Section,
    _ report: Report
  ) throws {
    let mode = durability == .full ? "full" : "normal"
    let name = "\(Format.bytes(values.encodedSize())) \(mode)"

    let libraryPath = try scratch.freshFile("library.db")
    let store = try PersistentStore(path: libraryPath, options: StoreOptions(durability: durability))
    var libraryValues = values
    let liveData = try store.liveData("value", default: libraryValues.take())
    let library = Writer(name: "library", path: libraryPath) { try liveData.set(libraryValues.take()) }

    let rawPath = try scratch.freshFile("raw.db")
    let rawStore = try RawVersionedStore(path: rawPath, synchronous: mode.uppercased())
    var rawValues = values
    let raw = Writer(name: "raw", path: rawPath) { try rawStore.set(rawValues.take(), key: "value") }

    let results = try measureWrites(
      [library, raw], rounds: rounds, writesPerRound: writesPerRound, warmUp: quick ? 2 : 100)
    let expected = Int64(rounds * writesPerRound + (quick ? 2 : 100))
    try BenchmarkError.expect(
      liveData.version == expected, "library wrote \(liveData.version) of \(expected)")

    section.addLatencyRow("library \(name)", results[0], baseline: results[1])
    section.addLatencyRow("raw     \(name)", results[1], baseline: nil)
    report.recordWrites("set", "library \(name)", results[0], baseline: results[1])
    report.recordWrites("set", "raw \(name)", results[1], baseline: nil)

    try store.close()
    scratch.remove(database: libraryPath)
    scratch.remove(database: rawPath)
  }
}
