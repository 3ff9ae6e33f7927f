import Foundation
import PersistentLiveData

/// Issue 3: the cost of a write must not grow with the history of its key — `set` on a key with no
/// rows against `set` on a key with 1,000,000 stored versions (10,000 in quick mode).
///
/// The long history is written straight into the library's `pld_values` table by raw SQLite in one
/// transaction (the store is opened once before to create the schema), then the store is reopened.
@MainActor
struct HistoryBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var historyRows: Int { quick ? 10_000 : 1_000_000 }
  private var rounds: Int { quick ? 2 : 9 }
  private var writesPerRound: Int { quick ? 20 : 3_000 }
  private let options = StoreOptions(durability: .normal)

  func run(_ report: Report) throws {
    var values = ValueCycle(Profile.sample)

    let emptyPath = try scratch.freshFile("empty.db")
    let emptyStore = try PersistentStore(path: emptyPath, options: options)
    let empty = try emptyStore.liveData("value", default: values.take())

    let longPath = try scratch.freshFile("history.db")
    try PersistentStore(path: longPath, options: options).close()
    let payload = try RawVersionedStore.makeEncoder().encode(values.take())
    var latest: Int64 = 0
    let prefill = try MonotonicClock.measure {
      latest = try RawRestore.appendHistory(
        path: longPath, key: "value", count: historyRows, payload: payload)
    }
    var longStore: PersistentStore?
    let reopen = try MonotonicClock.measure {
      longStore = try PersistentStore(path: longPath, options: options)
    }
    guard let longStore else { throw BenchmarkError(description: "the store did not reopen") }
    let long = try longStore.liveData("value", default: values.take())
    try BenchmarkError.expect(long.version == latest, "restored version \(long.version), expected \(latest)")

    let results = try measureWrites(
      [
        Writer(name: "0 rows", path: emptyPath) { try empty.set(values.take()) },
        Writer(name: "long history", path: longPath) { try long.set(values.take()) },
      ], rounds: rounds, writesPerRound: writesPerRound, warmUp: quick ? 2 : 100)

    let rows = Format.count(historyRows)
    var section = Section(
      "Write cost with history: set on a key with 0 vs \(rows) rows (issue 3: ≤ 1.05x)",
      header: Section.latencyHeader(first: "history of the key"))
    section.addLatencyRow("0 rows", results[0], baseline: nil)
    section.addLatencyRow("\(rows) rows", results[1], baseline: results[0])
    report.recordWrites("history", "0 rows", results[0], baseline: nil)
    report.recordWrites("history", "\(historyRows) rows", results[1], baseline: results[0])
    let megabytes = fileSize(longPath) / 1e6
    report.record("history", "\(historyRows) rows", "prefill", prefill / 1e9, unit: "s")
    report.record("history", "\(historyRows) rows", "reopen", reopen / 1e6, unit: "ms")
    report.record("history", "\(historyRows) rows", "fileSize", megabytes, unit: "MB")
    section.notes = [
      "Durability .normal (no fsync per commit, so the B-tree cost is not hidden behind it), ~115 B values;",
      "the \"0 rows\" key starts empty and grows to \(Format.count(rounds * writesPerRound)) rows during the run.",
      "Ratios compare with the 0-row key. Prefill by raw SQLite: \(Format.value(prefill / 1e9)) s, file \(Format.value(megabytes)) MB;",
      "reopening that store (validation included; no key is read at open) took \(Format.value(reopen / 1e6)) ms.",
    ]
    report.print(section)

    try emptyStore.close()
    try longStore.close()
    scratch.remove(database: emptyPath)
    scratch.remove(database: longPath)
  }

}
