import Foundation
import PersistentLiveData

/// Issue 7: what the store's background checkpoints do for the tail latency of `set` when writes come in
/// bursts (the usual shape for an app): the same store with its background work (checkpoints once writes
/// pause) against one whose background work is off (every checkpoint runs inside a caller's `set`, as
/// SQLite's automatic checkpoint does).
@MainActor
struct CheckpointBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 5 }
  private var burstsPerRound: Int { quick ? 2 : 20 }
  private var writesPerBurst: Int { quick ? 10 : 150 }
  /// Longer than the store's pause threshold (20 ms) plus one polling period (50 ms).
  private let pause: TimeInterval = 0.09

  func run(_ report: Report) throws {
    var values = ValueCycle(Profile.sample)
    var backgroundOptions = StoreOptions(durability: .normal)
    backgroundOptions.externalChangePollInterval = .milliseconds(50)
    var callerOptions = StoreOptions(durability: .normal)
    callerOptions.externalChangePollInterval = nil

    let backgroundPath = try scratch.freshFile("background.db")
    let backgroundStore = try PersistentStore(path: backgroundPath, options: backgroundOptions)
    let background = try backgroundStore.liveData("value", default: values.take())
    let callerPath = try scratch.freshFile("caller.db")
    let callerStore = try PersistentStore(path: callerPath, options: callerOptions)
    let caller = try callerStore.liveData("value", default: values.take())

    let writers = [
      Writer(name: "background checkpoints", path: backgroundPath) { try background.set(values.take()) },
      Writer(name: "checkpoints in set", path: callerPath) { try caller.set(values.take()) },
    ]
    var results = Array(repeating: WriteResults(), count: writers.count)
    try interleave(rounds: rounds, contenders: writers.count) { _, index in
      let write = writers[index].write
      let roundStart = MonotonicClock.now()
      var pausedNanoseconds = 0.0
      for _ in 0..<burstsPerRound {
        for _ in 0..<writesPerBurst {
          let start = MonotonicClock.now()
          try write()
          results[index].latencies.append(MonotonicClock.nanoseconds(since: start))
        }
        let pauseStart = MonotonicClock.now()
        Thread.sleep(forTimeInterval: pause)
        pausedNanoseconds += MonotonicClock.nanoseconds(since: pauseStart)
      }
      let busySeconds = (MonotonicClock.nanoseconds(since: roundStart) - pausedNanoseconds) / 1e9
      results[index].throughputs.append(Double(burstsPerRound * writesPerBurst) / busySeconds)
    }
    for (index, writer) in writers.enumerated() {
      results[index].walBytes = fileSize(writer.path + "-wal")
    }

    var section = Section(
      "Checkpoints: set in bursts, background checkpoints vs checkpoints in set (issue 7: p99.9 .normal < 200 µs)",
      header: Section.latencyHeader(first: "checkpoints"))
    section.addLatencyRow(writers[0].name, results[0], baseline: results[1])
    section.addLatencyRow(writers[1].name, results[1], baseline: nil)
    report.recordWrites("checkpoint", "background", results[0], baseline: results[1])
    report.recordWrites("checkpoint", "in-set", results[1], baseline: nil)
    section.notes = [
      "Durability .normal, ~115 B values; bursts of \(writesPerBurst) writes, then a pause of \(Int(pause * 1_000)) ms",
      "(untimed); \(burstsPerRound) bursts per round, \(rounds) interleaved rounds. Ratios compare with checkpoints in set.",
    ]
    report.print(section)

    try backgroundStore.close()
    try callerStore.close()
    scratch.remove(database: backgroundPath)
    scratch.remove(database: callerPath)
  }
}
