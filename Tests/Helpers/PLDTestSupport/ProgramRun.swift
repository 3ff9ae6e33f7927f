package import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// What a program run by ``run(_:_:)`` left: its exit status and everything it wrote.
///
/// ```swift
/// let result = try run("/usr/bin/sqlite3", ["-readonly", path, "SELECT count(*) FROM pld_values"])
/// #expect(result.status == 0, "\(result.errorOutput)")
/// ```
package struct ProcessResult: Sendable {
  /// The exit status, or 128 + the signal for a program killed by a signal.
  package let status: Int32
  /// Its standard output.
  package let output: String
  /// Its standard error.
  package let errorOutput: String
}

/// Runs `executable` with `arguments` to its end and returns what it wrote, waiting with ``waitForExit(_:)``.
///
/// Its output goes to temporary files, not pipes: a pipe's end of file never came when a process another
/// test started meanwhile (a PostgreSQL server) inherited the pipe's write end, and a test hung after
/// `chattr` had exited.
///
/// ```swift
/// let result = try run("/usr/bin/chattr", ["+i", path])
/// guard result.status == 0 else { return }   // no root, or no attributes on this file system
/// ```
/// - Parameters:
///   - executable: The program's path.
///   - arguments: Its arguments, without the program's name.
/// - Returns: Its exit status, standard output and standard error.
/// - Throws: When the output files cannot be made or the program cannot be started.
@discardableResult
package func run(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
  let folder = FileManager.default.temporaryDirectory
  let outputURL = folder.appendingPathComponent("pld-run-\(UUID().uuidString).out")
  let errorURL = folder.appendingPathComponent("pld-run-\(UUID().uuidString).err")
  defer {
    try? FileManager.default.removeItem(at: outputURL)
    try? FileManager.default.removeItem(at: errorURL)
  }
  _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
  _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
  let output = try FileHandle(forWritingTo: outputURL)
  let errors = try FileHandle(forWritingTo: errorURL)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  let status = waitForExit(process)
  try? output.close()
  try? errors.close()
  return ProcessResult(
    status: status,
    output: String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self),
    errorOutput: String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self))
}

/// Waits for `process` to end and returns its exit status (128 + the signal for one killed by a signal).
///
/// Foundation's `waitUntilExit` can miss a child's end on Linux: in one CI run a `chattr` child stayed a
/// zombie while the test waited for it until the run was stopped. `waitpid` reaps the child itself; when
/// Foundation reaped it first, its own wait has the status.
///
/// ```swift
/// try process.run()
/// #expect(waitForExit(process) == 0)
/// ```
/// - Parameter process: A process that was started.
/// - Returns: Its exit status, or 128 + the signal that killed it.
package func waitForExit(_ process: Process) -> Int32 {
  let pid = process.processIdentifier
  var status: Int32 = 0
  var result: pid_t
  repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
  guard result == pid else {
    process.waitUntilExit()
    return process.terminationStatus
  }
  let signal = status & 0x7f
  return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}
