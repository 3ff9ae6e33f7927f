import PersistentLiveData

/// Issue 7: what `.last(100)` retention adds to a write, amortized: the store deletes old versions in
/// batches, so most writes cost the same and a few pay for a batch.
@MainActor
struct RetentionBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 9 }
  private var writesPerRound: Int { quick ? 20 : 3_000 }

  func run(_ report: Report) throws {
    var values = ValueCycle(Profile.sample)
    let allPath = try scratch.freshFile("all.db")
    let allStore = try PersistentStore(
      path: allPath, options: StoreOptions(durability: .normal, retention: .all))
    let all = try allStore.liveData("value", default: values.take())
    let lastPath = try scratch.freshFile("last100.db")
    let lastStore = try PersistentStore(
      path: lastPath, options: StoreOptions(durability: .normal, retention: .last(100)))
    let last = try lastStore.liveData("value", default: values.take())

    let results = try measureWrites(
      [
        Writer(name: ".all", path: allPath) { try all.set(values.take()) },
        Writer(name: ".last(100)", path: lastPath) { try last.set(values.take()) },
      ], rounds: rounds, writesPerRound: writesPerRound, warmUp: quick ? 2 : 200)
    let kept = try last.history().count
    try BenchmarkError.expect(kept == 100 || quick, ".last(100) kept \(kept) versions")

    var section = Section(
      "Retention: set with .last(100) vs .all (issue 7: amortized ≤ 1.06x)",
      header: Section.latencyHeader(first: "retention"))
    section.addLatencyRow(".all", results[0], baseline: nil)
    section.addLatencyRow(".last(100)", results[1], baseline: results[0])
    report.recordWrites("retention", "all", results[0], baseline: nil)
    report.recordWrites("retention", "last(100)", results[1], baseline: results[0])
    section.notes = [
      "Durability .normal, ~115 B values, one key per store, \(rounds) interleaved rounds of \(Format.count(writesPerRound)) writes.",
      "The time ratio is the amortized cost (batch deletions included); p99/p99.9 show the batches.",
    ]
    report.print(section)

    try allStore.close()
    try lastStore.close()
    scratch.remove(database: allPath)
    scratch.remove(database: lastPath)
  }
}
