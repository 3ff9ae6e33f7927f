import Foundation

/// The machine, build and command a run measured.
struct RunInfo: Encodable {
  let date: String
  let command: String
  let arguments: [String]
  let quick: Bool
  let build: String
  let processors: Int
  let cpuModel: String
  let sqliteVersion: String
  /// The SQLite GRDB runs on (`SELECT sqlite_version()` through GRDB).
  let grdbSQLiteVersion: String
  let kernel: String
  var peakResidentMegabytes: Double?

  init(options: Options) {
    date = ISO8601DateFormatter().string(from: Date())
    arguments = Array(CommandLine.arguments.dropFirst())
    command = (["swift run -c release --package-path Benchmarks pld-bench"] + arguments).joined(
      separator: " ")
    quick = options.quick
    #if DEBUG
    build = "debug"
    #else
    build = "release"
    #endif
    processors = ProcessInfo.processInfo.activeProcessorCount
    cpuModel = Self.cpuModel() ?? "unknown"
    sqliteVersion = RawDatabase.libraryVersion
    grdbSQLiteVersion = GRDBVersionedStore.sqliteVersion
    kernel = ProcessInfo.processInfo.operatingSystemVersionString
  }

  /// The lines printed above the tables.
  var header: [String] {
    [
      "date:       \(date)",
      "command:    \(command)",
      "executable: \(CommandLine.arguments.first ?? "pld-bench") (\(build) build)",
      "machine:    \(processors) processors (nproc), \(cpuModel)",
      "system:     \(kernel)",
      "SQLite:     \(sqliteVersion) (sqlite3_libversion); GRDB 7.10.0 runs on SQLite \(grdbSQLiteVersion)",
      "mode:       \(quick ? "quick (tiny sizes, a check that everything runs; not a measurement)" : "full")",
    ]
  }

  /// The "model name" line of /proc/cpuinfo.
  private static func cpuModel() -> String? {
    guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
    let line = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
    return line?.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
  }
}

/// The peak resident set size of this process so far, in megabytes.
func peakResidentMegabytes() -> Double {
  var usage = rusage()
  #if os(Linux)
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_maxrss) / 1_024  // kilobytes on Linux
  #else
  getrusage(RUSAGE_SELF, &usage)
  return Double(usage.ru_maxrss) / 1_048_576  // bytes on macOS
  #endif
}

/// The current resident set size of this process in megabytes (`/proc/self/statm`), or nil where
/// that file does not exist.
func residentMegabytes() -> Double? {
  guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
  let fields = statm.split(separator: " ")
  guard fields.count > 1, let pages = Double(fields[1]) else { return nil }
  return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// The peak resident set size of this process's address space (`VmHWM` in `/proc/self/status`) in
/// megabytes, or nil where that file does not exist. Unlike `ru_maxrss` it starts anew at `exec`.
func peakResidentMegabytesOfAddressSpace() -> Double? {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
  guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
  let fields = line.split(separator: " ", omittingEmptySubsequences: true)
  guard fields.count >= 2, let kilobytes = Double(fields[1]) else { return nil }
  return kilobytes / 1_024
}
