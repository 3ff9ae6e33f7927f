import Foundation
import PersistentLiveData

/// Issue 7: memory for 1,000,000 history rows (10,000 in quick mode). A store whose one key holds the
/// rows is restored and `history(limit: 100)` is read — in a fresh child process (`pld-bench
/// --memory-probe KIND PATH`), so that its peak RSS is this work's alone, not the benchmark's. Raw SQLite
/// reading the same 100 rows, and a child that opens nothing, are the baselines. If the library loaded
/// every row, its peak would grow by about the file size.
@MainActor
struct MemoryBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var historyRows: Int { quick ? 10_000 : 1_000_000 }
  private var rounds: Int { quick ? 1 : 3 }

  /// What a probe process does.
  enum Probe: String, CaseIterable {
    /// Starts and exits: the process's own floor.
    case none
    /// `PersistentStore(path:)` (default options), `liveData`, `history(limit: 100)`.
    case library
    /// Raw SQLite: open, `SELECT … ORDER BY version DESC LIMIT 100`, decode.
    case raw
  }

  func run(_ report: Report) throws {
    let path = try scratch.freshFile("memory.db")
    let options = StoreOptions(durability: .normal)
    try PersistentStore(path: path, options: options).close()
    let payload = try RawVersionedStore.makeEncoder().encode(Profile.sample(0))
    _ = try RawRestore.appendHistory(path: path, key: "value", count: historyRows, payload: payload)
    let megabytes = fileSize(path) / 1e6

    // reports[probe] = the probes' results, rounds interleaved.
    var reports = Array(repeating: [ProbeReport](), count: Probe.allCases.count)
    try interleave(rounds: rounds, contenders: Probe.allCases.count) { _, index in
      reports[index].append(try Self.spawn(Probe.allCases[index], path: path))
    }

    let rows = Format.count(historyRows)
    var section = Section(
      "Memory: restore a key of \(rows) rows, read history(limit: 100), in a fresh process (issue 7)",
      header: ["process", "peak RSS MB", "over the empty process MB", "RSS after MB", "rows read", "ms"])
    let floor = Summary(reports[0].map(\.peakMegabytes)).median
    for probe in Probe.allCases {
      let results: [ProbeReport] = reports[probe.index]
      let peak = Summary(results.map(\.peakMegabytes)).median
      let after = Summary(results.map(\.residentMegabytes)).median
      let milliseconds = Summary(results.map(\.milliseconds)).median
      let rowsRead = results.last?.rows ?? 0
      if probe == .library {
        try BenchmarkError.expect(rowsRead == 100, "history(limit: 100) returned \(rowsRead) rows")
      }
      section.add(
        probe.label, Format.value(peak), probe == .none ? "" : Format.value(peak - floor),
        Format.value(after),
        Format.count(rowsRead), probe == .none ? "" : Format.value(milliseconds))
      report.record("memory", "\(probe.rawValue) \(historyRows) rows", "peakRSS", peak, unit: "MB")
      report.record(
        "memory", "\(probe.rawValue) \(historyRows) rows", "peakOverEmpty", peak - floor, unit: "MB")
      report.record(
        "memory", "\(probe.rawValue) \(historyRows) rows", "milliseconds", milliseconds, unit: "ms")
    }
    report.record("memory", "\(historyRows) rows", "fileSize", megabytes, unit: "MB")
    section.notes = [
      "The store file holds \(rows) versions of one key (~115 B each), \(Format.value(megabytes)) MB; written by raw SQLite.",
      "Each probe is a new pld-bench process (median of \(rounds)); peak RSS is its VmHWM (/proc/self/status). The library",
      "opens with default options (which read no key at open).",
      "A library that loaded every row would peak at least \(Format.value(megabytes)) MB above the empty process.",
    ]
    report.print(section)
    scratch.remove(database: path)
  }

  /// One probe's measurements, printed by the child as one JSON line.
  struct ProbeReport: Codable {
    var peakMegabytes: Double
    var residentMegabytes: Double
    var rows: Int
    var milliseconds: Double
  }

  /// Runs `pld-bench --memory-probe PROBE PATH` and reads its report.
  private static func spawn(_ probe: Probe, path: String) throws -> ProbeReport {
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["--memory-probe", probe.rawValue, path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try BenchmarkError.expect(
      process.terminationStatus == 0,
      "the \(probe.rawValue) memory probe exited with \(process.terminationStatus)")
    return try JSONDecoder().decode(ProbeReport.self, from: data)
  }

  /// The child's side: does `probe`'s work on the store at `path` and prints a ``ProbeReport``.
  static func probe(_ probe: Probe, path: String) throws {
    var rows = 0
    let elapsed = try MonotonicClock.measure {
      switch probe {
      case .none:
        break
      case .library:
        let store = try PersistentStore(path: path, options: StoreOptions(durability: .normal))
        let liveData = try store.liveData("value", default: Profile.sample(0))
        rows = try liveData.history(limit: 100).count
        withExtendedLifetime(store) {}
      case .raw:
        let database = try RawDatabase(path: path)
        let statement = try database.prepare(
          "SELECT version, payload FROM pld_values WHERE key = ? ORDER BY version DESC LIMIT 100")
        try statement.bind("value", at: 1)
        let decoder = JSONDecoder()
        while try statement.step() {
          _ = try decoder.decode(Profile.self, from: statement.data(1))
          rows += 1
        }
      }
    }
    // VmHWM, not getrusage: ru_maxrss survives exec, so a child spawned with vfork inherits the peak of
    // its parent (this benchmark process); VmHWM belongs to the child's own address space.
    let resident = residentMegabytes() ?? 0
    let report = ProbeReport(
      peakMegabytes: max(resident, peakResidentMegabytesOfAddressSpace() ?? peakResidentMegabytes()),
      residentMegabytes: resident, rows: rows, milliseconds: elapsed / 1e6)
    FileHandle.standardOutput.write(try JSONEncoder().encode(report))
  }
}

extension MemoryBenchmark.Probe {
  /// The position in `allCases`.
  var index: Int { Self.allCases.firstIndex(of: self) ?? 0 }

  var label: String {
    switch self {
    case .none: "empty process (starts, exits)"
    case .library: "library: open + liveData + history(limit: 100)"
    case .raw: "raw SQLite: open + 100 newest rows + decode"
    }
  }
}
