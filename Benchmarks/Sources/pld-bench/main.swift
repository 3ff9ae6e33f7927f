import CoreMetrics
import Foundation
import Prometheus

// pld-bench: the performance benchmark of PersistentLiveData. Top-level code runs on the main actor,
// where the library's observers are called. See README.md for what each table measures.

let options: Options
do {
  options = try Options.parse(CommandLine.arguments.dropFirst())
} catch {
  FileHandle.standardError.write(Data("pld-bench: \(error)\n\n\(Options.usage)\n".utf8))
  exit(2)
}
if options.help {
  print(Options.usage)
  exit(0)
}
if let (probe, path) = options.memoryProbe {
  // The child process of the memory benchmark: its peak RSS must be this work's alone.
  do {
    try MemoryBenchmark.probe(probe, path: path)
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("pld-bench --memory-probe: \(error)\n".utf8))
    exit(1)
  }
}

if let writer = options.externalWriter {
  // The writing child of the external benchmark: another process committing to the observed store.
  do {
    try ExternalBenchmark.write(path: writer.path, count: writer.count, seed: writer.seed)
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("pld-bench --external-writer: \(error)\n".utf8))
    exit(1)
  }
}

// PLD_BENCH_METRICS_BOOTSTRAP=1: a Prometheus backend for the whole process, so that every store of every
// group reports (compare with a run without it; the metrics group compares within one process).
if ProcessInfo.processInfo.environment["PLD_BENCH_METRICS_BOOTSTRAP"] == "1" {
  MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
  print("Metrics: swift-prometheus bootstrapped for the whole process (PLD_BENCH_METRICS_BOOTSTRAP=1).")
}

var run = RunInfo(options: options)
print("# PersistentLiveData benchmark\n")
run.header.forEach { print($0) }
#if DEBUG
print("\nWARNING: a debug build; numbers are meaningless. Use swift run -c release.")
#endif

let report = Report()
let started = MonotonicClock.now()
do {
  let scratch = try ScratchDirectory()
  /// Prints and records how much CPU the host stole since `before`, the start of the group `name`.
  func noteSteal(_ name: String, since before: CPUSteal.Reading?) {
    guard let share = CPUSteal.share(since: before) else { return }
    print("  CPU steal during the \(name) group: \(Format.value(share * 100)) % of the machine's CPU time.")
    report.record("steal", name, "percent", share * 100, unit: "%")
  }
  /// Runs one group when it was asked for, then notes the steal.
  func group(_ name: String, _ body: () async throws -> Void) async throws {
    guard options.runs(name) else { return }
    let before = CPUSteal.read()
    try await body()
    noteSteal(name, since: before)
  }
  // First: the sync latency that every later .full figure sits on.
  try await group("fsync") { try FsyncBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("delivery") { try DeliveryBenchmark(quick: options.quick).run(report) }
  try await group("registration") { try await RegistrationBenchmark(quick: options.quick).run(report) }
  try await group("set") { try SetBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("attribution") {
    try AttributionBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("conditional") {
    try ConditionalBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("collections") {
    try await CollectionBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("encoding") { try EncodingBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("restore") { try RestoreBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("open") { try OpenBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("history") { try HistoryBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("retention") { try RetentionBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("checkpoint") {
    try CheckpointBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("memory") { try MemoryBenchmark(quick: options.quick, scratch: scratch).run(report) }
  if options.runs("groupcommit") {
    // Not through group(_:_:): this group's writers run off the main actor, and so does its `run`.
    let before = CPUSteal.read()
    try await GroupCommitBenchmark(quick: options.quick, scratch: scratch).run(report)
    noteSteal("groupcommit", since: before)
  }
  try await group("idle") { try IdleBenchmark(quick: options.quick, scratch: scratch).run(report) }
  try await group("external") {
    try await ExternalBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("external-scale") {
    try await ExternalScaleBenchmark(quick: options.quick, scratch: scratch).run(report)
  }
  try await group("metrics") { try MetricsBenchmark(quick: options.quick, scratch: scratch).run(report) }
  Goals(report: report, quick: options.quick).print(report)
} catch {
  FileHandle.standardError.write(Data("pld-bench: \(error)\n".utf8))
  exit(1)
}

run.peakResidentMegabytes = peakResidentMegabytes()
let seconds = MonotonicClock.nanoseconds(since: started) / 1e9
print("\nTotal: \(Format.value(seconds)) s, peak RSS \(Format.value(run.peakResidentMegabytes ?? 0)) MB.")
if let path = options.jsonPath {
  do {
    try report.writeJSON(to: path, run: run)
    print("Results written to \(path).")
  } catch {
    FileHandle.standardError.write(Data("pld-bench: cannot write \(path): \(error)\n".utf8))
    exit(1)
  }
}
