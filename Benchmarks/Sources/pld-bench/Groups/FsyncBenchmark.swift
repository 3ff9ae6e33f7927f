import Foundation

/// The machine's sync latency: the physical limit that every `.full` commit, and so every `.full`
/// ratio, sits on. In the scratch folder, append 4 KiB to a file and `fdatasync` it, N times, and the
/// same with `fsync` on a file of its own; the two alternate round by round and each sample times one
/// append and its sync.
struct FsyncBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private let blockSize = 4_096
  private var rounds: Int { quick ? 2 : 10 }
  private var syncsPerRound: Int { quick ? 25 : 200 }

  /// The contenders, in table order.
  private enum Contender: Int, CaseIterable {
    case fdatasync, fsync

    var label: String {
      switch self {
      case .fdatasync: "append 4 KiB + fdatasync"
      case .fsync: "append 4 KiB + fsync"
      }
    }

    var key: String {
      switch self {
      case .fdatasync: "fdatasync"
      case .fsync: "fsync"
      }
    }
  }

  func run(_ report: Report) throws {
    let files = try Contender.allCases.map { try AppendedFile(path: scratch.freshFile("\($0.key).dat")) }
    let block = [UInt8](repeating: 0x5A, count: blockSize)
    // samples[contender] = nanoseconds of every append + sync, pooled over the rounds.
    var samples = Array(repeating: [Double](), count: Contender.allCases.count)
    try interleave(rounds: rounds, contenders: Contender.allCases.count) { _, index in
      let contender = Contender.allCases[index]
      for _ in 0..<syncsPerRound {
        samples[index].append(
          try MonotonicClock.measure { try files[index].append(block, dataOnly: contender == .fdatasync) })
      }
    }
    for (index, file) in files.enumerated() {
      let size = try file.size()
      try BenchmarkError.expect(
        size == rounds * syncsPerRound * blockSize, "\(Contender.allCases[index].key) wrote \(size) bytes")
    }

    var section = Section(
      "fsync: this machine's sync latency, the floor of every .full commit",
      header: ["call", "syncs", "p50 µs", "p99 µs", "p99.9 µs", "mean µs", "max µs"])
    for contender in Contender.allCases {
      let summary = Summary(samples[contender.rawValue])
      section.add(
        contender.label, Format.count(summary.count), Format.value(summary.percentile(50) / 1e3),
        Format.value(summary.percentile(99) / 1e3), Format.value(summary.percentile(99.9) / 1e3),
        Format.value(summary.mean / 1e3), Format.value(summary.percentile(100) / 1e3))
      for (metric, value) in [
        ("p50", summary.percentile(50)), ("p99", summary.percentile(99)), ("p99.9", summary.percentile(99.9)),
        ("mean", summary.mean), ("max", summary.percentile(100)),
      ] {
        report.record("fsync", contender.key, metric, value / 1e3, unit: "us")
      }
    }
    section.notes = [
      "Each sample: write(2) of 4 KiB at the end of a file in the scratch folder, then the sync; \(rounds) rounds",
      "of \(Format.count(syncsPerRound)) per call, alternating, pooled. The file grows, so fdatasync also writes its size, as",
      "for a growing -wal file. SQLite in WAL mode syncs the -wal once per .full commit: read the .full rows",
      "below (and raw SQLite one write per commit in the group-commit table) against this p50.",
    ]
    report.print(section)
  }
}

/// A file opened for appending, written with `write(2)` and synced with `fdatasync` or `fsync`; closed
/// when released.
private final class AppendedFile {
  private let descriptor: Int32

  init(path: String) throws {
    descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    if descriptor < 0 { throw Self.error("open \(path)") }
  }

  /// Appends `bytes`, then syncs the file: its data (and the size it needs) with `dataOnly`, else all
  /// of its metadata as well.
  func append(_ bytes: [UInt8], dataOnly: Bool) throws {
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
      }
      if count < 0 {
        if errno == EINTR { continue }
        throw Self.error("write")
      }
      written += count
    }
    if (dataOnly ? fdatasync(descriptor) : fsync(descriptor)) != 0 {
      throw Self.error(dataOnly ? "fdatasync" : "fsync")
    }
  }

  /// The file's size in bytes.
  func size() throws -> Int {
    var status = stat()
    if fstat(descriptor, &status) != 0 { throw Self.error("fstat") }
    return Int(status.st_size)
  }

  deinit {
    _ = close(descriptor)
  }

  private static func error(_ call: String) -> BenchmarkError {
    BenchmarkError(description: "\(call): \(String(cString: strerror(errno)))")
  }
}
