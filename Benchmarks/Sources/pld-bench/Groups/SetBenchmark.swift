import Foundation
import PersistentLiveData

/// Issues 3 and 7: `PersistentLiveData.set` against the other ways of storing the same value — raw
/// SQLite doing the same work (encode the value as sorted-keys JSON, `BEGIN IMMEDIATE`, read
/// `max(version)`, `INSERT`, `COMMIT`), GRDB inserting a Codable record, and (in `.full`) an atomic
/// file write per value — in both durability modes, for a ~115-byte and a ~10 KB value. Each
/// contender writes one key of its own fresh file; all contenders of a case alternate round by round.
///
/// A second table times `set` with 0, 1 and 1,000 `observeForever` observers on the main actor, whose
/// delivery happens inside the timed call.
@MainActor
struct SetBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  /// Many short rounds: the fsync latency of a shared machine drifts within seconds (150 µs to several
  /// ms), and short alternating rounds expose every contender to the same drift.
  private var rounds: Int { quick ? 2 : 27 }
  private var warmUp: Int { quick ? 2 : 100 }

  /// The contenders of a case, in table order.
  private enum Contender: Int, CaseIterable {
    case library, raw, grdb, atomicFile

    /// The name in the table and, with the case, in the JSON results.
    var label: String {
      switch self {
      case .library: "library"
      case .raw: "raw"
      case .grdb: "grdb"
      case .atomicFile: "atomic-file"
      }
    }
  }

  func run(_ report: Report) throws {
    let small = ValueCycle(Profile.sample)
    let large = ValueCycle(Catalog.sample)
    var section = Section(
      "set: PersistentLiveData.set vs raw SQLite, GRDB Codable record, atomic file (ratios to raw)",
      header: Section.latencyHeader(first: "case"))
    var ratios = Section(
      "set: library / raw and library / GRDB (issue 3: .full ≤ 1.2x, .normal ≤ 1.3x raw; "
        + "issue 7: ≤ 1.10x raw, ≤ 0.5x GRDB, p99.9 .normal < 200 µs)",
      header: [
        "case", "lib/raw p50", "lib/raw time", "lib/GRDB p50", "lib/GRDB time", "GRDB/raw time",
        "file/raw time", "lib p99.9 µs",
      ])
    try compare(
      small, durability: .normal, writesPerRound: quick ? 20 : 1_000, section: &section, ratios: &ratios,
      report)
    try compare(
      small, durability: .full, writesPerRound: quick ? 20 : 350, section: &section, ratios: &ratios, report
    )
    try compare(
      large, durability: .normal, writesPerRound: quick ? 10 : 350, section: &section, ratios: &ratios,
      report)
    try compare(
      large, durability: .full, writesPerRound: quick ? 10 : 270, section: &section, ratios: &ratios, report)
    section.notes = [
      "Each case's contenders alternate round by round (\(rounds) rounds); latencies are pooled over the rounds,",
      "writes/s is the median of the rounds. p50 ratio = contender p50 / raw p50; time ratio = raw writes/s /",
      "contender writes/s (the mean cost ratio, stalls included). Every contender encodes inside the timed call.",
      "grdb: DatabaseQueue.write { max(version) by a cached statement; Codable record insert }, GRDB encodes",
      "the payload property to JSON. atomic-file: encode, write a temp file, fsync, rename (latest value only).",
    ]
    ratios.notes = [
      "From the same interleaved runs as the table above: lib/GRDB below 0.50x meets issue 7's goal.",
      "Time ratios compare mean costs (median writes/s of the rounds), p50 ratios the typical write.",
    ]
    report.print(section)
    report.print(ratios)
    if Self.onlyCase == nil { try observers(small, report) }
  }

  /// The one case `PLD_BENCH_SET_ONLY` names, if any.
  private static var onlyCase: String? { ProcessInfo.processInfo.environment["PLD_BENCH_SET_ONLY"] }

  // MARK: Contenders

  private func compare<Value: Codable & Sendable>(
    _ values: ValueCycle<Value>, durability: Durability, writesPerRound: Int, section: inout Section,
    ratios: inout Section, _ report: Report
  ) throws {
    let mode = durability == .full ? "full" : "normal"
    let name = "\(Format.bytes(values.encodedSize())) \(mode)"
    // PLD_BENCH_SET_ONLY="114 B normal" runs that case alone (and no observer table): a profile of one case.
    if let only = Self.onlyCase, only != name { return }

    let libraryPath = try scratch.freshFile("library.db")
    var options = StoreOptions(durability: durability)
    // PLD_BENCH_WAL_SYNC=off: without the background sync of .normal (SQLite's plain synchronous=NORMAL),
    // to measure what the bounded loss window costs.
    if ProcessInfo.processInfo.environment["PLD_BENCH_WAL_SYNC"] == "off" { options.walSyncInterval = nil }
    let store = try PersistentStore(path: libraryPath, options: options)
    var libraryValues = values
    let liveData = try store.liveData("value", default: libraryValues.take())
    let library = Writer(name: "library", path: libraryPath) { try liveData.set(libraryValues.take()) }

    let rawPath = try scratch.freshFile("raw.db")
    let rawStore = try RawVersionedStore(path: rawPath, synchronous: mode.uppercased())
    var rawValues = values
    let raw = Writer(name: "raw", path: rawPath) { try rawStore.set(rawValues.take(), key: "value") }

    let grdbPath = try scratch.freshFile("grdb.db")
    let grdbStore = try GRDBVersionedStore(path: grdbPath, synchronous: mode.uppercased())
    var grdbValues = values
    var grdbVersion: Int64 = 0
    let grdb = Writer(name: "grdb", path: grdbPath) {
      grdbVersion = try grdbStore.set(grdbValues.take(), key: "value")
    }

    var writers = [library, raw, grdb]
    let fileFolder = try scratch.freshFile("files")
    let fileStore = try AtomicFileStore(folder: fileFolder)
    if durability == .full {
      var fileValues = values
      writers.append(
        Writer(name: "atomic-file", path: fileStore.path(key: "value")) {
          try fileStore.set(fileValues.take(), key: "value")
        })
    }

    let results = try measureWrites(writers, rounds: rounds, writesPerRound: writesPerRound, warmUp: warmUp)
    let expected = Int64(rounds * writesPerRound + warmUp)
    try BenchmarkError.expect(
      liveData.version == expected, "library wrote \(liveData.version) of \(expected)")
    try BenchmarkError.expect(grdbVersion == expected, "GRDB wrote \(grdbVersion) of \(expected)")
    if durability == .full {
      try BenchmarkError.expect(
        fileStore.storedPayload(key: "value")?.isEmpty == false, "the atomic file write left no file")
    }

    for (index, result) in results.enumerated() {
      guard let contender = Contender(rawValue: index) else { continue }
      let baseline = contender == .raw ? nil : results[Contender.raw.rawValue]
      section.addLatencyRow("\(contender.label) \(name)", result, baseline: baseline)
      report.recordWrites("set", "\(contender.label) \(name)", result, baseline: baseline)
    }
    let toGRDB = Section.ratios(results[Contender.library.rawValue], results[Contender.grdb.rawValue])
    let toRaw = Section.ratios(results[Contender.library.rawValue], results[Contender.raw.rawValue])
    let grdbToRaw = Section.ratios(results[Contender.grdb.rawValue], results[Contender.raw.rawValue])
    let fileToRaw =
      durability == .full
      ? Section.ratios(results[Contender.atomicFile.rawValue], results[Contender.raw.rawValue]).time : .nan
    report.record("set", "library \(name)", "p50RatioToGRDB", toGRDB.p50, unit: "x")
    report.record("set", "library \(name)", "timeRatioToGRDB", toGRDB.time, unit: "x")
    ratios.add(
      name, Format.ratio(toRaw.p50), Format.ratio(toRaw.time), Format.ratio(toGRDB.p50),
      Format.ratio(toGRDB.time), Format.ratio(grdbToRaw.time), Format.ratio(fileToRaw),
      Format.value(results[Contender.library.rawValue].latency.percentile(99.9) / 1_000))

    try store.close()
    scratch.remove(database: libraryPath)
    scratch.remove(database: rawPath)
    scratch.remove(database: grdbPath)
    fileStore.remove()
  }

  // MARK: Observers

  /// Counts the callbacks, so a lost or doubled delivery stops the benchmark.
  private final class Sink {
    var calls = 0
  }

  /// `set` of the ~115 B value with 0, 1 and 1,000 `observeForever` observers, delivery included.
  private func observers(_ values: ValueCycle<Profile>, _ report: Report) throws {
    let fanOuts = [0, 1, quick ? 100 : 1_000]
    var section = Section(
      "set with observers: observeForever on the main actor, delivery inside the timed set (ratios to 0)",
      header: Section.latencyHeader(first: "case"))
    for durability in [Durability.normal, .full] {
      let mode = durability == .full ? "full" : "normal"
      let writesPerRound = quick ? 20 : (durability == .full ? 270 : 1_000)
      var stores: [PersistentStore] = []
      var writers: [Writer] = []
      var checks: [() throws -> Void] = []
      for fanOut in fanOuts {
        let path = try scratch.freshFile("observed-\(fanOut).db")
        let store = try PersistentStore(path: path, options: StoreOptions(durability: durability))
        var cycle = values
        let liveData = try store.liveData("value", default: cycle.take())
        let sink = Sink()
        for _ in 0..<fanOut {
          liveData.observeForever(receiveCurrent: false) { _ in sink.calls += 1 }
        }
        stores.append(store)
        writers.append(Writer(name: "\(fanOut)", path: path) { try liveData.set(cycle.take()) })
        checks.append {
          let expected = Int(liveData.version) * fanOut
          try BenchmarkError.expect(
            sink.calls == expected, "\(fanOut) observers got \(sink.calls) of \(expected) calls")
        }
      }
      let results = try measureWrites(writers, rounds: rounds, writesPerRound: writesPerRound, warmUp: warmUp)
      try checks.forEach { try $0() }
      for (index, fanOut) in fanOuts.enumerated() {
        let name = "\(Format.bytes(values.encodedSize())) \(mode), \(Format.count(fanOut)) observers"
        let baseline = index == 0 ? nil : results[0]
        section.addLatencyRow(name, results[index], baseline: baseline)
        report.recordWrites(
          "set-observers", "\(mode) \(fanOut) observers", results[index], baseline: baseline)
      }
      for (store, writer) in zip(stores, writers) {
        try store.close()
        scratch.remove(database: writer.path)
      }
    }
    section.notes = [
      "One store per fan-out, all alternating round by round; every observer counts its calls (checked).",
      "The difference to 0 observers is the delivery: about N × the delivery table's ns/observer.",
    ]
    report.print(section)
  }
}
