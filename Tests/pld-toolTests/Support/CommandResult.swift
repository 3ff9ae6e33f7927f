import Foundation

@testable import pld_tool

/// What a run of pld-tool printed and its exit status.
struct CommandResult: Equatable, CustomStringConvertible {
  var stdout: String
  var stderr: String
  var status: Int32

  var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

  /// Standard output parsed as one JSON document (Foundation's parser, independent of the tool's).
  func json() throws -> Any {
    try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
  }

  /// Standard output parsed as JSON Lines.
  func jsonLines() throws -> [[String: Any]] {
    try stdout.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw CocoaError(.coderReadCorrupt)
      }
      return object
    }
  }
}

/// Runs pld-tool in this process, exactly as the binary's `main` does, capturing its output.
///
/// It holds the calling thread for the whole command: under ThreadSanitizer a single run (argument
/// parsing included) takes tens of milliseconds to seconds. A suite that calls it runs with `.ownThread`,
/// off the cooperative pool: suites that did not held both of the pool's threads on two cores, and no
/// other test of the process could run, or even be reported finished, until they were done.
///
/// - Parameters:
///   - arguments: The command line without the program name.
///   - errorIsTerminal: Pretend standard error is a terminal (progress is then drawn).
func runInProcess(_ arguments: [String], errorIsTerminal: Bool = false) -> CommandResult {
  let console = Console.capturing(errorIsTerminal: errorIsTerminal)
  let status = PLDTool.execute(arguments, console: console)
  return CommandResult(stdout: console.capturedOutput, stderr: console.capturedError, status: status)
}
