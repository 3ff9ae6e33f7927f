import Foundation
import PersistentLiveData

/// Issue 43: what the condition of `set(_:ifVersion:)` costs a `set`. Three contenders alternate round
/// by round, each writing one key of its own fresh file: `set(_:ifVersion:)` naming the key's version
/// (the check rides the write transaction: the head it compares with is the one the insert needs
/// anyway), a plain `set`, and raw SQLite doing the same work as the library (the `set` group's
/// baseline), for the ~115-byte value in both durability modes.
///
/// Goal: conditional / plain ≤ 1.02x.
@MainActor
struct ConditionalBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 27 }
  private var warmUp: Int { quick ? 2 : 100 }

  func run(_ report: Report) throws {
    let values = ValueCycle(Profile.sample)
    var section = Section(
      "conditional: set(_:ifVersion:) vs set vs raw SQLite (ratios to raw)",
      header: Section.latencyHeader(first: "case"))
    var ratios = Section(
      "conditional: conditional / plain (issue 43: ≤ 1.02x) and plain / raw",
      header: ["case", "conditional/plain p50", "conditional/plain time", "plain/raw p50", "plain/raw time"])
    for durability in [Durability.normal, .full] {
      try compare(
        values, durability: durability, writesPerRound: quick ? 20 : (durability == .full ? 350 : 1_000),
        section: &section, ratios: &ratios, report)
    }
    section.notes = [
      "Each case's contenders alternate round by round (\(rounds) rounds), each on a fresh file of its own.",
      "conditional: set(value, ifVersion: data.version), which always holds; plain: set(value).",
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

    let conditionalPath = try scratch.freshFile("conditional.db")
    let conditionalStore = try PersistentStore(
      path: conditionalPath, options: StoreOptions(durability: durability))
    var conditionalValues = values
    let guarded = try conditionalStore.liveData("value", default: conditionalValues.take())
    let conditional = Writer(name: "conditional", path: conditionalPath) {
      try guarded.set(conditionalValues.take(), ifVersion: guarded.version)
    }

    let plainPath = try scratch.freshFile("plain.db")
    let plainStore = try PersistentStore(path: plainPath, options: StoreOptions(durability: durability))
    var plainValues = values
    let plainData = try plainStore.liveData("value", default: plainValues.take())
    let plain = Writer(name: "plain", path: plainPath) { try plainData.set(plainValues.take()) }

    let rawPath = try scratch.freshFile("raw.db")
    let rawStore = try RawVersionedStore(path: rawPath, synchronous: mode.uppercased())
    var rawValues = values
    let raw = Writer(name: "raw", path: rawPath) { try rawStore.set(rawValues.take(), key: "value") }

    let results = try measureWrites(
      [conditional, plain, raw], rounds: rounds, writesPerRound: writesPerRound, warmUp: warmUp)
    let expected = Int64(rounds * writesPerRound + warmUp)
    try BenchmarkError.expect(
      guarded.version == expected, "conditional wrote \(guarded.version) of \(expected)")
    try BenchmarkError.expect(
      plainData.version == expected, "plain wrote \(plainData.version) of \(expected)")

    for (label, result) in zip(["conditional", "plain", "raw"], results) {
      let baseline = label == "raw" ? nil : results[2]
      section.addLatencyRow("\(label) \(name)", result, baseline: baseline)
      report.recordWrites("conditional", "\(label) \(name)", result, baseline: baseline)
    }
    let conditionalToPlain = Section.ratios(results[0], results[1])
    let plainToRaw = Section.ratios(results[1], results[2])
    report.record("conditional", name, "conditionalToPlainTime", conditionalToPlain.time, unit: "x")
    report.record("conditional", name, "conditionalToPlainP50", conditionalToPlain.p50, unit: "x")
    report.record("conditional", name, "plainToRawTime", plainToRaw.time, unit: "x")
    ratios.add(
      name, Format.ratio(conditionalToPlain.p50), Format.ratio(conditionalToPlain.time),
      Format.ratio(plainToRaw.p50), Format.ratio(plainToRaw.time))

    try conditionalStore.close()
    try plainStore.close()
    scratch.remove(database: conditionalPath)
    scratch.remove(database: plainPath)
    scratch.remove(database: rawPath)
  }
}
