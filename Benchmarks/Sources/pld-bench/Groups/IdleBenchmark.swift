import Foundation
import PersistentLiveData

/// Issues 7 and 13: what an idle store costs. A store with 100 live keys (each with a
/// `PersistentLiveData` and an observer) is left alone for 5 s (3 s in quick mode) while the main thread
/// sleeps; the CPU time the process used meanwhile (`getrusage`, user + system, all threads) is the cost
/// of looking for other processes' commits: by default the store is woken by inotify and polls only
/// every second (the safety net); the old setting polled `PRAGMA data_version` every 50 ms
/// (`watchesStoreFiles = false`). The same with the detection turned off is the floor of an idle
/// process (full mode only).
@MainActor
struct IdleBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var seconds: Double { quick ? 3 : 5 }
  /// Untimed, between the setup's last write and the measurement.
  private let settle: TimeInterval = 1
  private let keys = 100

  /// Counts the callbacks: an idle store must deliver nothing.
  private final class Sink {
    var calls = 0
  }

  func run(_ report: Report) throws {
    var contenders: [(label: String, name: String, interval: Duration?, watches: Bool)] = [
      ("watched: inotify + 1 s safety net (default)", "watched", .milliseconds(50), true),
      ("polling every 50 ms (watchesStoreFiles = false)", "poll 50ms", .milliseconds(50), false),
    ]
    if !quick {
      contenders.append(("detection off (externalChangePollInterval = nil)", "poll off", nil, false))
    }

    var section = Section(
      "Idle: a store with \(keys) live keys, nothing written for \(Format.value(seconds)) s (issue 7; issue 13: ≤ 0.05 %)",
      header: ["store", "CPU ms", "% of one core", "CPU µs per poll", "polls expected"])
    try interleave(rounds: 1, contenders: contenders.count) { _, index in
      let contender = contenders[index]
      let path = try scratch.freshFile("idle.db")
      var options = StoreOptions()
      options.externalChangePollInterval = contender.interval
      options.watchesStoreFiles = contender.watches
      let store = try PersistentStore(path: path, options: options)
      try store.transaction {
        for key in 0..<keys { try store.liveData("key.\(key)", default: 0).set(key) }
      }
      let sink = Sink()
      let live = try (0..<keys).map { key in
        let liveData = try store.liveData("key.\(key)", default: 0)
        liveData.observeForever(receiveCurrent: false) { _ in sink.calls += 1 }
        return liveData
      }

      // The setup's own commit wakes a watched store, which looks again a few times over ~0.5 s (the
      // commit of another process may not be visible yet when its write wakes the store): let that
      // pass, so that the figure is the idle store's.
      Thread.sleep(forTimeInterval: settle)
      let before = cpuSeconds()
      let start = MonotonicClock.now()
      Thread.sleep(forTimeInterval: seconds)
      let wall = MonotonicClock.nanoseconds(since: start) / 1e9
      let cpu = cpuSeconds() - before
      try BenchmarkError.expect(sink.calls == 0, "an idle store delivered \(sink.calls) values")
      withExtendedLifetime(live) {}
      try store.close()
      scratch.remove(database: path)

      let percent = 100 * cpu / wall
      // Watched, the store polls only at the safety net's interval.
      let pollInterval = contender.watches ? options.externalChangeSafetyNetInterval : contender.interval
      let polls = pollInterval.map {
        wall / (Double($0.components.attoseconds) / 1e18 + Double($0.components.seconds))
      }
      section.add(
        contender.label, Format.value(cpu * 1_000), Format.value(percent),
        polls.map { Format.value(cpu * 1e6 / $0) } ?? "", polls.map { Format.count(Int($0.rounded())) } ?? "")
      report.record("idle", contender.name, "cpuMilliseconds", cpu * 1_000, unit: "ms")
      report.record("idle", contender.name, "percentOfOneCore", percent, unit: "%")
      if let polls { report.record("idle", contender.name, "cpuPerPoll", cpu * 1e6 / polls, unit: "us") }
    }
    section.notes = [
      "CPU time of the whole process (getrusage RUSAGE_SELF, user + system) while the main thread sleeps, from",
      "1 s after the setup's last write (the wake-up it causes and its follow-up checks are not counted); the",
      "per-poll column divides it by the polls the interval implies (the safety net's, when watched). Default",
      "StoreOptions otherwise (.full).",
    ]
    report.print(section)
  }
}
