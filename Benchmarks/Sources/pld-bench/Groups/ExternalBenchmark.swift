import Foundation
import PersistentLiveData

/// Issue "every version from any process, within milliseconds": how long another process's commit
/// takes to reach an observer on this process's main actor. A child (`pld-bench --external-writer PATH
/// COUNT SEED`) sets a key to `CLOCK_MONOTONIC` (shared by all processes) just before each `set`,
/// pausing 70–100 ms between writes (more than a polling period, so that polling coalesces nothing);
/// the observer subtracts that stamp from the time it is called. The store is watched (the default:
/// inotify, 1 s safety net) or polls every 50 ms (`watchesStoreFiles = false`: the old behaviour),
/// interleaved round by round in one process.
@MainActor
struct ExternalBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 6 }
  private var writesPerRound: Int { quick ? 6 : 30 }

  /// The observer's side: the latency of each delivered value.
  private final class Sink {
    var latencies: [Double] = []
    var lastStamp = 0
  }

  private struct Contender {
    let label: String
    let name: String
    let watches: Bool
  }

  func run(_ report: Report) async throws {
    let contenders = [
      Contender(label: "watched: inotify + 1 s safety net (default)", name: "watched", watches: true),
      Contender(label: "polling every 50 ms (watchesStoreFiles = false)", name: "poll 50ms", watches: false),
    ]
    var latencies = Array(repeating: [Double](), count: contenders.count)
    for round in 0..<rounds {
      let order = Array(contenders.indices)
      for index in round.isMultiple(of: 2) ? order : order.reversed() {
        latencies[index] += try await measureRound(contenders[index], seed: round)
      }
    }

    var section = Section(
      "External: another process's commit → main-actor observer (issue 13: p50 ≤ 5 ms, p99 ≤ 20 ms)",
      header: ["store", "writes", "p50 ms", "p90 ms", "p99 ms", "max ms", "p50 ratio"])
    let baseline = Summary(latencies[1])
    for (index, contender) in contenders.enumerated() {
      let summary = Summary(latencies[index])
      let ms = { (ns: Double) in Format.value(ns / 1e6) }
      section.add(
        contender.label, Format.count(summary.count), ms(summary.median), ms(summary.percentile(90)),
        ms(summary.percentile(99)), ms(summary.sorted.last ?? .nan),
        index == 0 ? Format.ratio(summary.median / baseline.median) : "")
      for (metric, value) in [
        ("p50", summary.median), ("p90", summary.percentile(90)), ("p99", summary.percentile(99)),
        ("max", summary.sorted.last ?? .nan),
      ] {
        report.record("external", contender.name, metric, value / 1e6, unit: "ms")
      }
    }
    section.notes = [
      "\(rounds) interleaved rounds of \(writesPerRound) writes by a child process (.normal; 70–100 ms apart), each",
      "timed from just before its set (the commit included) to the main-actor observer's call in this process.",
    ]
    report.print(section)
  }

  /// One round: a fresh store observed on the main actor, a child writing `writesPerRound` stamps.
  private func measureRound(_ contender: Contender, seed: Int) async throws -> [Double] {
    let path = try scratch.freshFile("external.db")
    var options = StoreOptions()
    options.watchesStoreFiles = contender.watches
    options.verifiesIntegrityOnOpen = false
    let store = try PersistentStore(path: path, options: options)
    let stamp = try store.liveData("stamp", default: 0)
    let sink = Sink()
    let observer = stamp.observeForever(receiveCurrent: false) { value in
      sink.latencies.append(Double(MonotonicClock.now() &- UInt64(max(0, value))))
      sink.lastStamp = value
    }
    defer { observer.cancel() }

    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: Self.executable)
    writer.arguments = ["--external-writer", path, "\(writesPerRound)", "\(seed)"]
    try writer.run()
    while writer.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    try BenchmarkError.expect(
      writer.terminationStatus == 0, "the external writer exited with \(writer.terminationStatus)")
    // The last write must arrive (within the safety net at worst).
    let deadline = MonotonicClock.now() + 3_000_000_000
    while stamp.version < writesPerRound || sink.lastStamp != stamp.value, MonotonicClock.now() < deadline {
      try await Task.sleep(for: .milliseconds(1))
    }
    try BenchmarkError.expect(
      stamp.version == writesPerRound && sink.lastStamp == stamp.value,
      "\(contender.name): the last external write was not delivered (version \(stamp.version))")
    try store.close()
    scratch.remove(database: path)
    return sink.latencies
  }

  private static var executable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
  }

  /// The child's side: `count` writes of the monotonic clock to `stamp`, 70–100 ms apart.
  static func write(path: String, count: Int, seed: Int) throws {
    var options = StoreOptions(durability: .normal)
    options.externalChangePollInterval = nil  // the writer watches nothing
    options.verifiesIntegrityOnOpen = false
    let store = try PersistentStore(path: path, options: options)
    var random = SplitMix(seed: UInt64(seed))
    // The collections group names a member to write, whose value is an item carrying the stamp.
    if let key = ProcessInfo.processInfo.environment["PLD_BENCH_STAMP_KEY"] {
      let member = try store.liveData(key, default: CollectionBenchmark.item(0))
      for _ in 0..<count {
        Thread.sleep(forTimeInterval: 0.070 + Double(random.next() % 30_000) / 1e6)
        try member.set(CollectionBenchmark.Item(title: "stamp", done: false, rank: Int(MonotonicClock.now())))
      }
      try store.close()
      return
    }
    let stamp = try store.liveData("stamp", default: 0)
    for _ in 0..<count {
      Thread.sleep(forTimeInterval: 0.070 + Double(random.next() % 30_000) / 1e6)
      try stamp.set(Int(MonotonicClock.now()))
    }
    try store.close()
  }
}

/// A small deterministic generator (SplitMix64) for the writer's pauses.
private struct SplitMix {
  var state: UInt64

  init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
