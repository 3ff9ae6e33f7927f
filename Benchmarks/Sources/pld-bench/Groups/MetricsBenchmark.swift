import CoreMetrics
import Foundation
import PersistentLiveData
import Prometheus

/// Issue 31: what the store's metrics cost. Three contenders alternate round by round on files of their
/// own: `set` on a store created with a swift-prometheus backend in effect (every call then records its
/// duration into a Prometheus histogram), `set` on a store without a backend (swift-metrics' no-op
/// factory: the store keeps no handles and measures nothing), and raw SQLite doing the same work as in the
/// `set` group. Goals: with Prometheus ≤ 1.02x the time without; without ≤ 1.10x raw.
///
/// The Prometheus store is created inside `withMetricsFactory`: `MetricsSystem.factory` then returns the
/// Prometheus factory, exactly what it returns after `MetricsSystem.bootstrap` (which a process may do only
/// once), and the store creates the same handles. So both variants run in one process, interleaved, on the
/// same drift of the machine. `PLD_BENCH_METRICS_BOOTSTRAP=1` bootstraps Prometheus for the whole process
/// instead (every group's stores then report): alternate runs with and without it to compare processes.
@MainActor
struct MetricsBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 41 }
  private var warmUp: Int { quick ? 2 : 200 }

  func run(_ report: Report) throws {
    var section = Section(
      "metrics: set with a Prometheus backend vs without one vs raw SQLite (ratios to the store without)",
      header: Section.latencyHeader(first: "case"))
    var ratios = Section(
      "metrics: issue 31 goals (with Prometheus ≤ 1.02x without; without ≤ 1.10x raw)",
      header: ["case", "prom/none p50", "prom/none time", "none/raw p50", "none/raw time"])
    for durability in [Durability.normal, .full] {
      try compare(durability, section: &section, ratios: &ratios, report)
    }
    components(report)
    section.notes = [
      "Rounds alternate (\(rounds) rounds); ratios as in the set group: p50 ratio and time ratio (mean cost).",
      "prometheus: store created inside withMetricsFactory(PrometheusMetricsFactory); none: no backend.",
    ]
    report.print(section)
    report.print(ratios)
  }

  /// What a `set` adds with a Prometheus backend, part by part, in a tight loop (steadier than the
  /// difference of two write loops): four clock reads (the call and its COMMIT) and two histogram records.
  private func components(_ report: Report) {
    let count = quick ? 10_000 : 2_000_000
    let factory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
    let timer = Timer(label: "pld.bench.timer", dimensions: [("backend", "sqlite")], factory: factory)
    var sink: UInt64 = 0
    let clockStart = MonotonicClock.now()
    for _ in 0..<count { sink &+= DispatchTime.now().uptimeNanoseconds }
    let clock = MonotonicClock.nanoseconds(since: clockStart) / Double(count)
    let recordStart = MonotonicClock.now()
    for index in 0..<count { timer.recordNanoseconds(Int64(40_000 + index % 1_000)) }
    let record = MonotonicClock.nanoseconds(since: recordStart) / Double(count)
    let perSet = 4 * clock + 2 * record
    var section = Section(
      "metrics: the parts a set adds with Prometheus (tight loops of \(Format.count(count)))",
      header: ["part", "ns each", "per set", "ns per set"])
    section.add("clock read (DispatchTime.now)", Format.value(clock), "4", Format.value(4 * clock))
    section.add("Prometheus histogram record", Format.value(record), "2", Format.value(2 * record))
    section.add("total", "", "", Format.value(perSet))
    section.notes = ["(checksum \(sink % 10))"]
    report.record("metrics", "parts", "clockRead", clock, unit: "ns")
    report.record("metrics", "parts", "histogramRecord", record, unit: "ns")
    report.record("metrics", "parts", "perSet", perSet, unit: "ns")
    report.print(section)
  }

  private func compare(
    _ durability: Durability, section: inout Section, ratios: inout Section, _ report: Report
  ) throws {
    let mode = durability == .full ? "full" : "normal"
    let writesPerRound = quick ? 20 : (durability == .full ? 300 : 1_000)
    let values = ValueCycle(Profile.sample)
    let registry = PrometheusCollectorRegistry()
    let factory = PrometheusMetricsFactory(registry: registry)

    let promPath = try scratch.freshFile("metrics-prometheus.db")
    let promStore = try withMetricsFactory(factory) {
      try PersistentStore(path: promPath, options: StoreOptions(durability: durability))
    }
    var promValues = values
    let promData = try promStore.liveData("value", default: promValues.take())

    let nonePath = try scratch.freshFile("metrics-none.db")
    let noneStore = try PersistentStore(path: nonePath, options: StoreOptions(durability: durability))
    var noneValues = values
    let noneData = try noneStore.liveData("value", default: noneValues.take())

    let rawPath = try scratch.freshFile("metrics-raw.db")
    let rawStore = try RawVersionedStore(path: rawPath, synchronous: mode.uppercased())
    var rawValues = values

    let writers = [
      Writer(name: "none", path: nonePath) { try noneData.set(noneValues.take()) },
      Writer(name: "prometheus", path: promPath) { try promData.set(promValues.take()) },
      Writer(name: "raw", path: rawPath) { try rawStore.set(rawValues.take(), key: "value") },
    ]
    let results = try measureWrites(writers, rounds: rounds, writesPerRound: writesPerRound, warmUp: warmUp)
    let expected = Int64(rounds * writesPerRound + warmUp)
    try BenchmarkError.expect(promData.version == expected, "prometheus store wrote \(promData.version)")
    // The backend did record every set: the Prometheus histogram's count is the number of calls.
    let exposition = registry.emitToString()
    let countLine = #"pld_write_duration_count{backend="sqlite",operation="set"} \#(expected)"#
    try BenchmarkError.expect(
      exposition.contains(countLine), "Prometheus did not count \(expected) sets:\n\(exposition)")

    let names = ["none", "prometheus", "raw"]
    for (index, result) in results.enumerated() {
      let baseline = index == 0 ? nil : results[0]
      section.addLatencyRow("\(names[index]) 114 B \(mode)", result, baseline: baseline)
      report.recordWrites("metrics", "\(names[index]) \(mode)", result, baseline: baseline)
    }
    let promToNone = Section.ratios(results[1], results[0])
    let noneToRaw = Section.ratios(results[0], results[2])
    report.record("metrics", "prometheus \(mode)", "timeRatioToNone", promToNone.time, unit: "x")
    report.record("metrics", "prometheus \(mode)", "p50RatioToNone", promToNone.p50, unit: "x")
    report.record("metrics", "none \(mode)", "timeRatioToRaw", noneToRaw.time, unit: "x")
    report.record("metrics", "none \(mode)", "p50RatioToRaw", noneToRaw.p50, unit: "x")
    ratios.add(
      mode, Format.ratio(promToNone.p50), Format.ratio(promToNone.time), Format.ratio(noneToRaw.p50),
      Format.ratio(noneToRaw.time))

    try promStore.close()
    try noneStore.close()
    scratch.remove(database: promPath)
    scratch.remove(database: nonePath)
    scratch.remove(database: rawPath)
  }
}
