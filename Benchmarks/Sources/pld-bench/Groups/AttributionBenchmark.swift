import Foundation
import PersistentLiveData

/// Issue 30: what recording a `WriteAttribution` costs a `set`. Three contenders alternate round by
/// round, each writing one key of its own fresh file: `set` with an attribution in effect (an author and
/// a reason, as `pld-tool` records), `set` without one, and raw SQLite doing the same work as the
/// library (the `set` group's baseline), for the ~115-byte value in both durability modes.
///
/// Goals: with / without ≤ 1.05x (the author and reason go into the same `INSERT`, no statement of their
/// own); without / raw ≤ 1.10x (issue 7's goal, here measured next to it).
@MainActor
struct AttributionBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 27 }
  private var warmUp: Int { quick ? 2 : 100 }

  /// The attribution the first contender writes with: about what an operator's change carries.
  static let attribution = WriteAttribution(
    author: "ops@example.com", reason: "INC-4211: turn off the new checkout")

  func run(_ report: Report) throws {
    let values = ValueCycle(Profile.sample)
    var section = Section(
      "attribution: set with a WriteAttribution vs without vs raw SQLite (ratios to raw)",
      header: Section.latencyHeader(first: "case"))
    var ratios = Section(
      "attribution: with / without (issue 30: ≤ 1.05x) and without / raw (issue 7: ≤ 1.10x)",
      header: ["case", "with/without p50", "with/without time", "without/raw p50", "without/raw time"])
    for durability in [Durability.normal, .full] {
      try compare(
        values, durability: durability, writesPerRound: quick ? 20 : (durability == .full ? 350 : 1_000),
        section: &section, ratios: &ratios, report)
    }
    section.notes = [
      "Each case's contenders alternate round by round (\(rounds) rounds), each on a fresh file of its own.",
      "with: set inside WriteAttribution.$current.withValue (author \(Self.attribution.author?.utf8.count ?? 0) B, "
        + "reason \(Self.attribution.reason?.utf8.count ?? 0) B); without: the same set, none in effect.",
    ]
    report.print(section)
    report.print(ratios)
  }

  private func compare<Value: Codable & Sendable>(
    _ values: ValueCycle<Value>, durability: Durability, writesPerRound: Int, section: inout Section,
    ratios: inout Section, _ report: Report
  ) throws {
    let mode = durability == .full ? "full" : "normal"
    let name = "\(Format.bytes(values.encodedSize())) \(mode)"

    let withPath = try scratch.freshFile("attributed.db")
    let withStore = try PersistentStore(path: withPath, options: StoreOptions(durability: durability))
    var withValues = values
    let attributed = try withStore.liveData("value", default: withValues.take())
    let with = Writer(name: "with", path: withPath) {
      try WriteAttribution.$current.withValue(Self.attribution) { try attributed.set(withValues.take()) }
    }

    let withoutPath = try scratch.freshFile("plain.db")
    let withoutStore = try PersistentStore(path: withoutPath, options: StoreOptions(durability: durability))
    var withoutValues = values
    let plain = try withoutStore.liveData("value", default: withoutValues.take())
    let without = Writer(name: "without", path: withoutPath) { try plain.set(withoutValues.take()) }

    let rawPath = try scratch.freshFile("raw.db")
    let rawStore = try RawVersionedStore(path: rawPath, synchronous: mode.uppercased())
    var rawValues = values
    let raw = Writer(name: "raw", path: rawPath) { try rawStore.set(rawValues.take(), key: "value") }

    let results = try measureWrites(
      [with, without, raw], rounds: rounds, writesPerRound: writesPerRound, warmUp: warmUp)
    let expected = Int64(rounds * writesPerRound + warmUp)
    try BenchmarkError.expect(
      attributed.version == expected, "with wrote \(attributed.version) of \(expected)")
    try BenchmarkError.expect(plain.version == expected, "without wrote \(plain.version) of \(expected)")
    try BenchmarkError.expect(
      try attributed.history(limit: 1).first?.attribution == Self.attribution,
      "the attribution was not recorded")

    for (label, result) in zip(["with", "without", "raw"], results) {
      let baseline = label == "raw" ? nil : results[2]
      section.addLatencyRow("\(label) \(name)", result, baseline: baseline)
      report.recordWrites("attribution", "\(label) \(name)", result, baseline: baseline)
    }
    let withToWithout = Section.ratios(results[0], results[1])
    let withoutToRaw = Section.ratios(results[1], results[2])
    report.record("attribution", name, "withToWithoutTime", withToWithout.time, unit: "x")
    report.record("attribution", name, "withToWithoutP50", withToWithout.p50, unit: "x")
    report.record("attribution", name, "withoutToRawTime", withoutToRaw.time, unit: "x")
    ratios.add(
      name, Format.ratio(withToWithout.p50), Format.ratio(withToWithout.time), Format.ratio(withoutToRaw.p50),
      Format.ratio(withoutToRaw.time))

    try withStore.close()
    try withoutStore.close()
    scratch.remove(database: withPath)
    scratch.remove(database: withoutPath)
    scratch.remove(database: rawPath)
  }
}
