import Foundation
import PersistentLiveData

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
    case rawOnePerCommit, rawSixteenPerCommit, library

    var label: String {
      switch self {
      case .rawOnePerCommit: "raw SQLite, one write per transaction"
      case .rawSixteenPerCommit: "raw SQLite, 16 writes per transaction"
      case .library: "library, 16 concurrent write(_:) callers"
      }
    }

    var key: String {
      switch self {
      case .rawOnePerCommit: "raw 1/commit"
      case .rawSixteenPerCommit: "raw 16/commit"
      case .library: "library write"
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
        }
        scratch.remove(database: path)
        samples[contender, default: []].append(seconds / Double(writers * writesPerWriter))
      }
    }

    let median = samples.mapValues { Summary($0).percentile(0.5) }
    var section = Section(
      "Group commit: \(writers) writers × \(writesPerWriter) writes of ~115 B at .full (issue 16)",
      header: ["contender", "µs per write", "writes/s", "library / this"])
    let library = median[.library] ?? .nan
    for contender in Contender.allCases {
      let perWrite = median[contender] ?? .nan
      section.add(
        contender.label, Format.value(perWrite * 1e6), Format.count(Int((1 / perWrite).rounded())),
        contender == .library ? "" : Format.ratio(library / perWrite))
      report.record("groupcommit", contender.key, "secondsPerWrite", perWrite, unit: "s")
    }
    report.record(
      "groupcommit", "library write", "ratioToRawOnePerCommit",
      library / (median[.rawOnePerCommit] ?? .nan), unit: "x")
    report.record(
      "groupcommit", "library write", "ratioToRawSixteenPerCommit",
      library / (median[.rawSixteenPerCommit] ?? .nan), unit: "x")
    section.notes = [
      "Median of \(rounds) rounds, contenders interleaved, a fresh file each. Raw SQLite runs on one thread",
      "(its writes are serialized anyway); the library's callers are tasks on the cooperative pool.",
      "A time ratio ≤ 0.2 means ≥ 5× raw one-per-commit's throughput; ≤ 1.11 means ≥ 0.9× raw",
      "sixteen-per-commit's.",
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

  private func runLibrary(path: String) async throws -> Double {
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .full))
    let values = try (0..<writers).map { try store.liveData("writer-\($0)", default: Profile.sample(0)) }
    let count = writesPerWriter
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
