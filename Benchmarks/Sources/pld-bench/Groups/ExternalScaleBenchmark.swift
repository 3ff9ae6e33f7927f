import Foundation
import PersistentLiveData

/// Issue "costs that follow what changed": what another process's commit costs this process, by how many
/// live keys it holds. The process holds N live keys (10 … 100,000) and observes one; a child
/// (`pld-bench --external-writer`, as in ``ExternalBenchmark``) sets the observed key 70–100 ms apart.
/// This process's CPU time (user + system, all threads) over the child's writes, divided by the writes,
/// is the cost of one external commit; the delay is from just before the child's `set` to the main-actor
/// observer. The goal: at 10,000 live keys, ≤ 2× (+0.5 ms) the CPU of 10 live keys, delay p50 ≤ 5 ms.
@MainActor
struct ExternalScaleBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var sizes: [Int] { quick ? [10, 1_000, 10_000] : [10, 1_000, 10_000, 100_000] }
  private var writes: Int { quick ? 10 : 40 }

  private final class Sink {
    var latencies: [Double] = []
    var lastStamp = 0
  }

  func run(_ report: Report) async throws {
    var section = Section(
      "External commits by live keys held (issue 27: 10,000 keys ≤ 2x (+0.5 ms) CPU of 10, p50 ≤ 5 ms)",
      header: ["live keys", "writes", "CPU per commit ms", "vs 10 keys", "delay p50 ms", "delay p99 ms"])
    var baseline: Double?
    for size in sizes {
      let (cpu, latencies) = try await measure(liveKeys: size)
      let summary = Summary(latencies)
      let perCommit = cpu / Double(writes)
      baseline = baseline ?? perCommit
      section.add(
        Format.count(size), Format.count(writes), Format.value(perCommit / 1e6),
        Format.ratio(perCommit / (baseline ?? perCommit)), Format.value(summary.median / 1e6),
        Format.value(summary.percentile(99) / 1e6))
      let name = "\(size) live keys"
      report.record("external-scale", name, "cpu per commit", perCommit / 1e6, unit: "ms")
      report.record("external-scale", name, "p50", summary.median / 1e6, unit: "ms")
      report.record("external-scale", name, "p99", summary.percentile(99) / 1e6, unit: "ms")
    }
    section.notes = [
      "CPU: this process's user + system time while a child process made \(writes) .normal writes 70–100 ms apart,",
      "per write (idle work included: the store's safety-net poll, the file watch, the child's open and close).",
      "Delay: from just before the child's set to the main-actor observer's call.",
    ]
    report.print(section)
  }

  /// One size: a fresh store holding `liveKeys` live keys, one of them observed on the main actor.
  private func measure(liveKeys: Int) async throws -> (cpu: Double, latencies: [Double]) {
    let path = try scratch.freshFile("external-scale.db")
    var options = StoreOptions()
    options.verifiesIntegrityOnOpen = false
    let store = try PersistentStore(path: path, options: options)
    let held = try (0..<liveKeys).map { try store.liveData("held-\($0)", default: 0) }
    try held.first?.set(1)  // the file, with its log, exists before the child writes
    let stamp = try store.liveData("stamp", default: 0)
    let sink = Sink()
    let observer = stamp.observeForever(receiveCurrent: false) { value in
      sink.latencies.append(Double(MonotonicClock.now() &- UInt64(max(0, value))))
      sink.lastStamp = value
    }
    defer { observer.cancel() }

    let cpuBefore = cpuSeconds()
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: Self.executable)
    writer.arguments = ["--external-writer", path, "\(writes)", "\(liveKeys)"]
    try writer.run()
    // Polled every 20 ms (Process.waitUntilExit spins on Linux): a small constant in every size's figure.
    while writer.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    try BenchmarkError.expect(
      writer.terminationStatus == 0, "the external writer exited with \(writer.terminationStatus)")
    let deadline = MonotonicClock.now() + 3_000_000_000
    while stamp.version < writes || sink.lastStamp != stamp.value, MonotonicClock.now() < deadline {
      try await Task.sleep(for: .milliseconds(1))
    }
    let cpu = (cpuSeconds() - cpuBefore) * 1e9
    try BenchmarkError.expect(
      stamp.version == writes && sink.lastStamp == stamp.value,
      "\(liveKeys) live keys: the last external write was not delivered (version \(stamp.version))")
    withExtendedLifetime(held) {}
    try store.close()
    scratch.remove(database: path)
    return (cpu, sink.latencies)
  }

  private static var executable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
  }
}
