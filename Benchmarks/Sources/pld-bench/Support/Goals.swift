/// The performance goals of issues 2, 3, 7, 13 ("every version from any process, within milliseconds"),
/// 16 (group commit) and 30 (attribution), checked against the figures of this run: the last table
/// of a run. Only printed — a missed goal never fails the run (timing is noisy; CI checks nothing here).
struct Goals {
  let report: Report
  /// A quick run measures nothing: its figures are shown, but registration growth at tiny sizes is not.
  let quick: Bool

  /// One goal: `figure` must be below `target` (or above, for `atLeast`).
  private struct Goal {
    let issue: String
    let goal: String
    let figure: Double?
    let target: Double
    let unit: String
    var detail = ""

    var status: String {
      guard let figure, figure.isFinite else { return "not measured" }
      if figure <= target { return "meets" }
      return "misses by \(Format.value(100 * (figure / target - 1)))%"
    }
  }

  private func value(_ group: String, _ name: String, _ metric: String) -> Double? {
    report.metrics.last { $0.group == group && $0.case == name && $0.metric == metric }?.value
  }

  /// The `set` cases of the library (`library 115 B full`…), in the order they ran.
  private var librarySetCases: [String] {
    var seen: [String] = []
    for metric in report.metrics where metric.group == "set" && metric.case.hasPrefix("library ") {
      if !seen.contains(metric.case) { seen.append(metric.case) }
    }
    return seen
  }

  private var goals: [Goal] {
    var goals: [Goal] = []
    goals.append(
      Goal(
        issue: "2, 7", goal: "delivery per observer at fan-out 1,000",
        figure: value("delivery", "fan-out 1,000", "liveDataPerObserver"), target: 50, unit: "ns"))
    for operation in RegistrationBenchmark.Operation.allCases {
      goals.append(
        Goal(
          issue: "2", goal: "\(operation.label): cost at 10,000 / at 1,000 (linear)",
          figure: value("registration", operation.key, "growth").flatMap { quick ? nil : $0 },
          target: 1.5, unit: "x"))
    }
    for name in librarySetCases {
      let size = String(name.dropFirst("library ".count))
      let full = name.hasSuffix(" full")
      let time = value("set", name, "timeRatio")
      let p50 = value("set", name, "p50Ratio").map { "p50 ratio \(Format.ratio($0))" } ?? ""
      goals.append(
        Goal(
          issue: "3", goal: "set \(size) / raw (time ratio)", figure: time, target: full ? 1.2 : 1.3,
          unit: "x",
          detail: p50))
      goals.append(
        Goal(
          issue: "7", goal: "set \(size) / raw (time ratio)", figure: time, target: 1.1, unit: "x",
          detail: p50))
      let toGRDB = value("set", name, "timeRatioToGRDB")
      let p50ToGRDB = value("set", name, "p50RatioToGRDB").map { "p50 ratio \(Format.ratio($0))" } ?? ""
      goals.append(
        Goal(
          issue: "7", goal: "set \(size) / GRDB Codable record (time ratio)", figure: toGRDB, target: 0.5,
          unit: "x", detail: p50ToGRDB))
      if !full {
        goals.append(
          Goal(
            issue: "7", goal: "set \(size) p99.9", figure: value("set", name, "p99.9"), target: 200,
            unit: "µs"))
      }
    }
    for mode in ["normal", "full"] {
      let name = "\(Format.bytes(ValueCycle(Profile.sample).encodedSize())) \(mode)"
      let p50 = value("attribution", name, "withToWithoutP50").map { "p50 ratio \(Format.ratio($0))" } ?? ""
      goals.append(
        Goal(
          issue: "30", goal: "set \(name) with an attribution / without (time ratio)",
          figure: value("attribution", name, "withToWithoutTime"), target: 1.05, unit: "x", detail: p50))
    }
    for mode in ["normal", "full"] {
      let name = "\(Format.bytes(ValueCycle(Profile.sample).encodedSize())) \(mode)"
      let p50 =
        value("conditional", name, "conditionalToPlainP50").map { "p50 ratio \(Format.ratio($0))" } ?? ""
      goals.append(
        Goal(
          issue: "43", goal: "set(_:ifVersion:) \(name) / set (time ratio)",
          figure: value("conditional", name, "conditionalToPlainTime"), target: 1.02, unit: "x", detail: p50))
    }
    goals.append(
      Goal(
        issue: "3", goal: "restore 5,000 keys / raw",
        figure: value("restore", "library 5000 keys", "ratioToRaw"),
        target: 1.5, unit: "x"))
    goals.append(
      Goal(
        issue: "7", goal: "restore 5,000 keys / raw",
        figure: value("restore", "library 5000 keys", "ratioToRaw"),
        target: 1.1, unit: "x",
        detail: value("restore", "libraryWithCheck 5000 keys", "ratioToRaw").map {
          "with quick_check at open \(Format.ratio($0))"
        } ?? ""))
    goals.append(
      Goal(
        issue: "16", goal: "restore 5,000 keys / raw",
        figure: value("restore", "library 5000 keys", "ratioToRaw"),
        target: 1.0, unit: "x"))
    goals.append(
      Goal(
        issue: "3, 7", goal: "set with 1,000,000 history rows / 0 rows (time ratio)",
        figure: value("history", "1000000 rows", "timeRatio"), target: 1.05, unit: "x",
        detail: value("history", "1000000 rows", "p50Ratio").map { "p50 ratio \(Format.ratio($0))" } ?? ""))
    goals.append(
      Goal(
        issue: "7", goal: "retention .last(100) / .all (time ratio)",
        figure: value("retention", "last(100)", "timeRatio"), target: 1.06, unit: "x"))
    goals.append(
      Goal(
        issue: "16", goal: "open a store of 100,000 keys + read 3 of them",
        figure: value("open", "library 100000 keys", "median"), target: 5, unit: "ms",
        detail: value("open", "empty", "median").map { "empty store: \(Format.value($0)) ms" } ?? ""))
    goals.append(
      Goal(
        issue: "16", goal: "open 100,000 keys + read 3 / open an empty store",
        figure: value("open", "library 100000 keys", "ratioToEmpty"), target: 1.1, unit: "x",
        detail: [
          value("open", "library 100000 keys", "ratioToEmptyWithReads").map {
            "to an empty store asked for the same 3 keys \(Format.ratio($0))"
          },
          value("open", "library 100000 keys", "ratioToRaw").map { "to raw SQLite \(Format.ratio($0))" },
        ].compactMap { $0 }.joined(separator: "; ")))
    let fileSize = value("memory", "1000000 rows", "fileSize")
    goals.append(
      Goal(
        issue: "7", goal: "peak RSS for 1M history rows over an empty process",
        figure: value("memory", "library 1000000 rows", "peakOverEmpty"), target: (fileSize ?? .nan) / 10,
        unit: "MB", detail: "target: < 1/10 of the \(Format.value(fileSize ?? .nan)) MB file (loads no rows)")
    )
    // Context, no goal: the sync latency one .full commit cannot go below.
    let fdatasync =
      value("fsync", "fdatasync", "p50").map { "; fdatasync p50 here: \(Format.value($0)) µs" } ?? ""
    goals.append(
      Goal(
        issue: "16", goal: "16 .full writers: library / raw one write per commit (time per write)",
        figure: value("groupcommit", "library write", "ratioToRawOnePerCommit"), target: 0.2, unit: "x",
        detail: "≤ 0.20x: ≥ 5× the throughput" + fdatasync))
    goals.append(
      Goal(
        issue: "16", goal: "16 .full writers: library / raw 16 writes per commit (time per write)",
        figure: value("groupcommit", "library write", "ratioToRawSixteenPerCommit"), target: 1.0 / 0.9,
        unit: "x", detail: "≤ 1.11x: ≥ 0.9× the throughput"))
    goals.append(
      Goal(
        issue: "45", goal: "16 .full writers: library / (raw 16 per commit + an empty write {} call)",
        figure: value("groupcommit", "library write", "ratioToRawSixteenPlusEmptyCall"), target: 1.05,
        unit: "x", detail: "the call's own cost (suspension, queue, resumption) measured by empty calls"))
    goals.append(
      Goal(
        issue: "16", goal: "time the calling actor is blocked per write(_:), p99.9",
        figure: value("groupcommit", "blocked write", "p999"), target: 20, unit: "µs",
        detail: [
          value("groupcommit", "blocked write cpu", "p999").map { "its CPU time: \(Format.value($0)) µs" },
          value("groupcommit", "blocked raw", "p999").map { "raw commit: \(Format.value($0)) µs" },
        ].compactMap { $0 }.joined(separator: "; ")))
    goals.append(
      Goal(
        issue: "13", goal: "another process's commit → main-actor observer, p50",
        figure: value("external", "watched", "p50"), target: 5, unit: "ms",
        detail: value("external", "poll 50ms", "p50").map { "polling every 50 ms: \(Format.value($0)) ms" }
          ?? ""))
    goals.append(
      Goal(
        issue: "13", goal: "another process's commit → main-actor observer, p99",
        figure: value("external", "watched", "p99"), target: 20, unit: "ms",
        detail: value("external", "poll 50ms", "p99").map { "polling every 50 ms: \(Format.value($0)) ms" }
          ?? ""))
    goals.append(
      Goal(
        issue: "13", goal: "idle store with 100 keys, CPU",
        figure: value("idle", "watched", "percentOfOneCore"), target: 0.05, unit: "% of a core",
        detail: value("idle", "poll 50ms", "percentOfOneCore").map {
          "polling every 50 ms: \(Format.value($0)) %"
        } ?? ""))
    for mode in ["normal", "full"] {
      goals.append(
        Goal(
          issue: "31", goal: "set 114 B \(mode): with a Prometheus backend / without (time ratio)",
          figure: value("metrics", "prometheus \(mode)", "timeRatioToNone"), target: 1.02, unit: "x",
          detail: value("metrics", "prometheus \(mode)", "p50RatioToNone").map {
            "p50 ratio \(Format.ratio($0))"
          }
            ?? ""))
      goals.append(
        Goal(
          issue: "31", goal: "set 114 B \(mode) without a metrics backend / raw (time ratio)",
          figure: value("metrics", "none \(mode)", "timeRatioToRaw"), target: 1.1, unit: "x",
          detail: value("metrics", "none \(mode)", "p50RatioToRaw").map { "p50 ratio \(Format.ratio($0))" }
            ?? ""))
    }
    return goals
  }

  func print(_ report: Report) {
    var section = Section(
      "Goals (issues 2, 3, 7, 13, 16, 30, 31): this run's figures"
        + (quick ? " — quick mode, not a measurement" : ""),
      header: ["issue", "goal", "figure", "target", "status", "also"])
    for goal in goals {
      let figure = goal.figure.map {
        goal.unit == "x" ? Format.ratio($0) : "\(Format.value($0)) \(goal.unit)"
      }
      let target =
        goal.unit == "x" ? "≤ \(Format.ratio(goal.target))" : "< \(Format.value(goal.target)) \(goal.unit)"
      section.add(goal.issue, goal.goal, figure ?? "-", target, goal.status, goal.detail)
    }
    section.notes = [
      "Issue 7 also asks for the idle CPU of the polling, the encoding question and the comparison with an",
      "atomic file write: see their tables. Registration: ≤ 1.5x counts as linear (quadratic would be ~10x).",
      "Open: 100,000 keys in the file, default options. The fsync table's p50 is the floor of one .full commit.",
      "No goal ever fails a run.",
    ]
    report.print(section)
  }
}
