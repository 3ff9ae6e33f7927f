import Foundation

/// A contender of a write benchmark: one call writes one value.
@MainActor
struct Writer {
  let name: String
  /// The database file written, to report the size of its WAL at the end.
  let path: String
  let write: @MainActor () throws -> Void
}

/// What one writer did over all rounds.
struct WriteResults {
  /// Nanoseconds of every write.
  var latencies: [Double] = []
  /// Writes per second of each round.
  var throughputs: [Double] = []
  /// The size of the database's `-wal` file after the last round: it stays bounded (about 4 MB with
  /// SQLite's default auto-checkpoint) unless checkpoints are starved.
  var walBytes = 0.0

  var latency: Summary { Summary(latencies) }
  var throughput: Double { Summary(throughputs).median }
}

/// Times `writesPerRound` writes of each writer per round, the writers interleaved round by round,
/// after `warmUp` untimed writes each.
@MainActor
func measureWrites(
  _ writers: [Writer], rounds: Int, writesPerRound: Int, warmUp: Int
) throws -> [WriteResults] {
  for writer in writers {
    for _ in 0..<warmUp { try writer.write() }
  }
  var results = Array(repeating: WriteResults(), count: writers.count)
  for index in results.indices { results[index].latencies.reserveCapacity(rounds * writesPerRound) }
  try interleave(rounds: rounds, contenders: writers.count) { _, index in
    let write = writers[index].write
    let roundStart = MonotonicClock.now()
    for _ in 0..<writesPerRound {
      let start = MonotonicClock.now()
      try write()
      results[index].latencies.append(MonotonicClock.nanoseconds(since: start))
    }
    let seconds = MonotonicClock.nanoseconds(since: roundStart) / 1e9
    results[index].throughputs.append(Double(writesPerRound) / seconds)
  }
  for (index, writer) in writers.enumerated() {
    results[index].walBytes = fileSize(writer.path + "-wal")
  }
  return results
}

extension Section {
  /// The header of a latency table.
  static func latencyHeader(first: String) -> [String] {
    [first, "p50 µs", "p99 µs", "p99.9 µs", "max µs", "writes/s", "p50 ratio", "time ratio", "WAL MB"]
  }

  /// A latency row; the ratios compare with `baseline` (time ratios: above 1 is slower).
  mutating func addLatencyRow(_ name: String, _ results: WriteResults, baseline: WriteResults?) {
    let latency = results.latency
    let ratios = baseline.map { Self.ratios(results, $0) }
    add(
      name, Format.value(latency.median / 1_000), Format.value(latency.percentile(99) / 1_000),
      Format.value(latency.percentile(99.9) / 1_000), Format.value((latency.sorted.last ?? .nan) / 1_000),
      Format.count(Int(results.throughput.rounded())),
      ratios.map { Format.ratio($0.p50) } ?? "", ratios.map { Format.ratio($0.time) } ?? "",
      Format.value(results.walBytes / 1e6))
  }

  /// p50 ratio and time ratio (the inverse ratio of the median throughputs).
  static func ratios(_ results: WriteResults, _ baseline: WriteResults) -> (p50: Double, time: Double) {
    (results.latency.median / baseline.latency.median, baseline.throughput / results.throughput)
  }
}

extension Report {
  /// Records the latency percentiles and throughput of `results`, and the ratios to `baseline`.
  func recordWrites(_ group: String, _ name: String, _ results: WriteResults, baseline: WriteResults?) {
    let latency = results.latency
    record(group, name, "p50", latency.median / 1_000, unit: "us")
    record(group, name, "p99", latency.percentile(99) / 1_000, unit: "us")
    record(group, name, "p99.9", latency.percentile(99.9) / 1_000, unit: "us")
    record(group, name, "max", (latency.sorted.last ?? .nan) / 1_000, unit: "us")
    record(group, name, "mean", latency.mean / 1_000, unit: "us")
    record(group, name, "throughput", results.throughput, unit: "writes/s")
    record(group, name, "samples", Double(latency.count), unit: "writes")
    record(group, name, "walSize", results.walBytes / 1e6, unit: "MB")
    if let baseline {
      let ratios = Section.ratios(results, baseline)
      record(group, name, "p50Ratio", ratios.p50, unit: "x")
      record(group, name, "timeRatio", ratios.time, unit: "x")
    }
  }
}

/// The size of a file in bytes; 0 if it does not exist.
func fileSize(_ path: String) -> Double {
  let attributes = try? FileManager.default.attributesOfItem(atPath: path)
  return (attributes?[.size] as? NSNumber)?.doubleValue ?? 0
}
