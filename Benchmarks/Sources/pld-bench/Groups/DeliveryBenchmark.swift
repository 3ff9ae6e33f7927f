import PersistentLiveData

/// Issue 2: what one `set` on the main actor costs per observer, with 1,000 and 10,000
/// `observeForever` observers on one `MutableLiveData`.
///
/// The baseline is the least any observer list can do: calling the same closures from a Swift array.
@MainActor
struct DeliveryBenchmark {
  let quick: Bool

  private var fanOuts: [Int] { quick ? [10, 100] : [1_000, 10_000] }
  private var deliveriesPerSample: Int { quick ? 20_000 : 4_000_000 }
  private var rounds: Int { quick ? 2 : 9 }

  /// Counts the callbacks, so a lost or doubled delivery stops the benchmark.
  final class Sink {
    var calls = 0
  }

  func run(_ report: Report) throws {
    // Contenders: (fan-out index, live data or closure array).
    let contenders = fanOuts.flatMap { fanOut in [(fanOut, true), (fanOut, false)] }
    var samples = Array(repeating: [Double](), count: contenders.count)
    try interleave(rounds: rounds, contenders: contenders.count) { _, contender in
      let (fanOut, isLiveData) = contenders[contender]
      let nanoseconds = isLiveData ? try liveDataSample(fanOut: fanOut) : try closureSample(fanOut: fanOut)
      samples[contender].append(nanoseconds)
    }

    var section = Section(
      "Delivery: set on the main actor, cost per observer (issue 2: < 50 ns at 1,000)",
      header: ["fan-out", "LiveData ns/observer", "min", "closure array ns/obs", "LiveData / array"])
    for (index, fanOut) in fanOuts.enumerated() {
      let liveData = Summary(samples[2 * index])
      let closures = Summary(samples[2 * index + 1])
      let name = "fan-out \(Format.count(fanOut))"
      section.add(
        Format.count(fanOut), Format.value(liveData.median), Format.value(liveData.minimum),
        Format.value(closures.median), Format.ratio(liveData.median / closures.median))
      report.record("delivery", name, "liveDataPerObserver", liveData.median, unit: "ns")
      report.record("delivery", name, "closureArrayPerObserver", closures.median, unit: "ns")
      report.record("delivery", name, "ratioToClosureArray", liveData.median / closures.median, unit: "x")
    }
    section.notes = [
      "One MutableLiveData<Int>, N observeForever(receiveCurrent: false) observers each counting its calls;",
      "a sample times \(Format.count(deliveriesPerSample)) deliveries (set × N) and divides by them; median of \(rounds) rounds.",
    ]
    report.print(section)
  }

  private func liveDataSample(fanOut: Int) throws -> Double {
    let liveData = MutableLiveData(0)
    let sink = Sink()
    for _ in 0..<fanOut {
      liveData.observeForever(receiveCurrent: false) { _ in sink.calls += 1 }
    }
    let sets = max(1, deliveriesPerSample / fanOut)
    let elapsed = MonotonicClock.measure {
      for value in 1...sets { liveData.set(value) }
    }
    try BenchmarkError.expect(
      sink.calls == sets * fanOut, "LiveData delivered \(sink.calls) of \(sets * fanOut)")
    liveData.removeAllObservers()
    return elapsed / Double(sets * fanOut)
  }

  private func closureSample(fanOut: Int) throws -> Double {
    let sink = Sink()
    let callbacks: [@MainActor (Int) -> Void] = (0..<fanOut).map { _ in { _ in sink.calls += 1 } }
    let sets = max(1, deliveriesPerSample / fanOut)
    let elapsed = MonotonicClock.measure {
      for value in 1...sets {
        for callback in callbacks { callback(value) }
      }
    }
    try BenchmarkError.expect(sink.calls == sets * fanOut, "closures ran \(sink.calls) of \(sets * fanOut)")
    return elapsed / Double(sets * fanOut)
  }
}
