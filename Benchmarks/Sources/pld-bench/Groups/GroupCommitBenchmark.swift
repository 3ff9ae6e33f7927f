import CoreMetrics
import Foundation
import PersistentLiveData
import Prometheus

/// Issue 16: group commit. Sixteen writers at `.full` — sixteen tasks each awaiting
/// `PersistentLiveData.write(_:)` in a loop, one key each — against raw SQLite committing the same writes
/// one per transaction (one sync each) and sixteen per transaction (one sync per sixteen: the physical
/// limit of batching). Throughput: seconds per write, median of the rounds, contenders interleaved.
struct GroupCommitBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private let writers = 16
  private var writesPerWriter: Int { quick ? 4 : 100 }
  private var rounds: Int { quick ? 1 : 5 }

  private enum Contender: Int, CaseIterable {
    case rawOnePerCommit, rawSixteenPerCommit, library, libraryEmpty

    var label: String {
      switch self {
      case .rawOnePerCommit: "raw SQLite, one write per transaction"
      case .rawSixteenPerCommit: "raw SQLite, 16 writes per transaction"
      case .library: "library, 16 concurrent write(_:) callers"
      case .libraryEmpty: "library, 16 callers of write {} (no write)"
      }
    }

    var key: String {
      switch self {
      case .rawOnePerCommit: "raw 1/commit"
      case .rawSixteenPerCommit: "raw 16/commit"
      case .library: "library write"
      case .libraryEmpty: "library empty write"
      }
    }
  }

  func run(_ report: Report) async throws {
    var samples: [Contender: [Double]] = [:]
    for round in 0..<rounds {
      let order = round.isMultiple(of: 2) ? Contender.allCases : Contender.allCases.reversed()
      for contender in order {
        let path = try scratch.freshFile("group.db")
        let seconds: Double
        switch contender {
        case .rawOnePerCommit, .rawSixteenPerCommit:
          seconds = try runRaw(path: path, batched: contender == .rawSixteenPerCommit)
        case .library:
          seconds = try await runLibrary(path: path)
        case .libraryEmpty:
          seconds = try await runLibraryEmpty(path: path)
        }
        scratch.remove(database: path)
        samples[contender, default: []].append(seconds / Double(writers * writesPerWriter))
      }
    }

    let median = samples.mapValues { Summary($0).percentile(50) }
    var section = Section(
      "Group commit: \(writers) writers × \(writesPerWriter) writes of ~115 B at .full (issue 16)",
      header: ["contender", "µs per write", "writes/s", "library / this"])
    /// The library's time per write over `contender`'s, round by round (see `pairedRatio`).
    func ratio(to contender: Contender) -> Double {
      pairedRatio(samples[.library] ?? [], samples[contender] ?? [])
    }
    for contender in Contender.allCases {
      let perWrite = median[contender] ?? .nan
      section.add(
        contender.label, Format.value(perWrite * 1e6), Format.count(Int((1 / perWrite).rounded())),
        contender == .library ? "" : Format.ratio(ratio(to: contender)))
      report.record("groupcommit", contender.key, "secondsPerWrite", perWrite, unit: "s")
    }
    report.record(
      "groupcommit", "library write", "ratioToRawOnePerCommit", ratio(to: .rawOnePerCommit), unit: "x")
    report.record(
      "groupcommit", "library write", "ratioToRawSixteenPerCommit", ratio(to: .rawSixteenPerCommit),
      unit: "x")
    section.notes = [
      "Median of \(rounds) rounds, contenders interleaved, a fresh file each; a ratio is the median of the",
      "rounds' own ratios. Raw SQLite runs on one thread",
      "(its writes are serialized anyway); the library's callers are tasks on the cooperative pool.",
      "A time ratio ≤ 0.2 means ≥ 5× raw one-per-commit's throughput; ≤ 1.11 means ≥ 0.9× raw",
      "sixteen-per-commit's. The empty writes measure the call itself: the caller's suspension and",
      "resumption, the queue, the writer's savepoint and an empty transaction (nothing to sync).",
    ]
    let emptyCall = median[.libraryEmpty] ?? .nan
    let bound = ((median[.rawSixteenPerCommit] ?? .nan) + emptyCall) * 1.05
    section.notes.append(
      "Raw 16/commit + the empty call, + 5 %: \(Format.value(bound * 1e6)) µs per write; the library: "
        + "\(Format.value((median[.library] ?? .nan) * 1e6)) µs.")
    report.record(
      "groupcommit", "library write", "ratioToRawSixteenPlusEmptyCall",
      (median[.library] ?? .nan) * 1.05 / bound, unit: "x")
    if !quick { section.notes.append(try await groupSizes(report)) }
    report.print(section)
    try await measureBlockedTime(report)
  }

  /// One more library run, untimed, with a Prometheus backend that records each group commit's size
  /// (`pld.group_commit.size`): how many calls share a sync.
  private func groupSizes(_ report: Report) async throws -> String {
    let registry = PrometheusCollectorRegistry()
    let path = try scratch.freshFile("group-sizes.db")
    let (writers, count) = (writers, writesPerWriter)
    _ = try await withMetricsFactory(PrometheusMetricsFactory(registry: registry)) {
      try await Self.runLibrary(path: path, writers: writers, count: count)
    }
    scratch.remove(database: path)
    var text: [UInt8] = []
    registry.emit(into: &text)
    func value(_ name: String) -> Double {
      String(decoding: text, as: UTF8.self).split(separator: "\n")
        .first { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
        .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? .nan
    }
    let groups = value("pld_group_commit_size_count")
    let mean = value("pld_group_commit_size_sum") / groups
    report.record("groupcommit", "library write", "meanGroupSize", mean, unit: "calls")
    return "Group sizes (one more run, pld.group_commit.size): \(Int(groups)) commits, "
      + "\(Format.value(mean)) calls each on average."
  }

  /// Issue 16's other goal: how long a caller's actor is blocked per `write(_:)` (the job that runs
  /// from its resumption to its suspension in `write`), against a synchronous raw SQLite commit on the
  /// same actor.
  private func measureBlockedTime(_ report: Report) async throws {
    let count = quick ? 50 : 2_000
    let caller = TimedCaller()
    let path = try scratch.freshFile("blocked.db")
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .full))
    let value = try store.liveData("caller", default: Profile.sample(0))
    try await caller.run { _ in
      for index in 0..<count { try await value.write(Profile.sample(index)) }
    }
    let (libraryWall, libraryCPU) = caller.executor.takeDurationsWithCPU()
    let library = Summary(libraryWall)
    try store.close()
    scratch.remove(database: path)

    let rawPath = try scratch.freshFile("blocked-raw.db")
    let raw = try RawVersionedStore(path: rawPath, synchronous: "FULL")
    let rawCount = quick ? 20 : 500
    nonisolated(unsafe) let unsafeRaw = raw  // used only on the caller's executor, one job at a time
    try await caller.run { _ in
      for index in 0..<rawCount {
        try unsafeRaw.set(Profile.sample(index), key: "caller")
        await Task.yield()
      }
    }
    let (rawWall, rawCPU) = caller.executor.takeDurationsWithCPU()
    let rawSummary = Summary(rawWall)
    scratch.remove(database: rawPath)

    var section = Section(
      "Time the calling actor is blocked per write, .full, ~115 B (issue 16)",
      header: ["caller", "calls", "p50 µs", "p99 µs", "p99.9 µs", "max µs"])
    for (label, calls, summary) in [
      ("library write(_:) (suspends)", count, library),
      ("  its thread's CPU time", count, Summary(libraryCPU)),
      ("raw SQLite commit (blocks)", rawCount, rawSummary),
      ("  its thread's CPU time", rawCount, Summary(rawCPU)),
    ] {
      section.add(
        label, Format.count(calls), Format.value(summary.percentile(50) / 1e3),
        Format.value(summary.percentile(99) / 1e3), Format.value(summary.percentile(99.9) / 1e3),
        Format.value(summary.percentile(100) / 1e3))
    }
    report.record("groupcommit", "blocked write", "p999", library.percentile(99.9) / 1e3, unit: "us")
    report.record("groupcommit", "blocked raw", "p999", rawSummary.percentile(99.9) / 1e3, unit: "us")
    report.record(
      "groupcommit", "blocked write cpu", "p999", Summary(libraryCPU).percentile(99.9) / 1e3, unit: "us")
    report.record("groupcommit", "blocked write", "p50", library.percentile(50) / 1e3, unit: "us")
    section.notes = [
      "An actor on a timing executor: each job runs from a resumption to the next suspension. For write(_:)",
      "that is the loop step and the enqueue; for raw SQLite, the whole synchronous commit, fsync included.",
      "Wall-clock time, as a frame deadline sees it; the CPU-time rows leave out the time the thread was",
      "runnable but preempted (2 cores: the caller, the store's writer and the encoding task share them).",
    ]
    report.print(section)
  }

  private func runRaw(path: String, batched: Bool) throws -> Double {
    let raw = try RawVersionedStore(path: path, synchronous: "FULL")
    let start = MonotonicClock.now()
    for index in 0..<writesPerWriter {
      if batched {
        try raw.set(batch: (0..<writers).map { ("writer-\($0)", Profile.sample(index)) })
      } else {
        for writer in 0..<writers { try raw.set(Profile.sample(index), key: "writer-\(writer)") }
      }
    }
    return MonotonicClock.nanoseconds(since: start) / 1e9
  }

  /// Sixteen tasks each calling `store.write {}` with a body that writes nothing, as often as the
  /// library's writers call `write(_:)`.
  private func runLibraryEmpty(path: String) async throws -> Double {
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .full))
    let count = writesPerWriter
    let start = MonotonicClock.now()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<writers {
        group.addTask { for _ in 0..<count { try await store.write {} } }
      }
      try await group.waitForAll()
    }
    let seconds = MonotonicClock.nanoseconds(since: start) / 1e9
    try store.close()
    return seconds
  }

  private func runLibrary(path: String) async throws -> Double {
    try await Self.runLibrary(path: path, writers: writers, count: writesPerWriter)
  }

  private static func runLibrary(path: String, writers: Int, count: Int) async throws -> Double {
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .full))
    let values = try (0..<writers).map { try store.liveData("writer-\($0)", default: Profile.sample(0)) }
    let start = MonotonicClock.now()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for value in values {
        group.addTask {
          for index in 0..<count { try await value.write(Profile.sample(index)) }
        }
      }
      try await group.waitForAll()
    }
    let seconds = MonotonicClock.nanoseconds(since: start) / 1e9
    for value in values {
      try BenchmarkError.expect(value.version == Int64(count), "a writer's versions are not 1…\(count)")
    }
    try store.close()
    return seconds
  }
}
