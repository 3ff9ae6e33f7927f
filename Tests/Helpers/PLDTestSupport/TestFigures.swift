internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The figure lines of the tests — the reliability suite's `RELIABILITY …`, the shared store's
/// `POSTGRES …` — which the README quotes: kept out of the test runner's output.
///
/// A line is appended to the file named by `PLD_FIGURES_FILE` when that is set (`.ci/run` prints the file
/// after the tests), and printed to standard output when `PLD_PRINT_FIGURES=1`. With neither, it is
/// dropped.
///
/// ```sh
/// PLD_PRINT_FIGURES=1 swift test --filter Reliability
/// PLD_FIGURES_FILE=/tmp/figures.txt swift test
/// ```
package enum TestFigures {
  /// Records `line` (without its newline) where the environment says.
  package static func record(_ line: String) {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["PLD_FIGURES_FILE"], !path.isEmpty {
      append(line + "\n", to: path)
    }
    if environment["PLD_PRINT_FIGURES"] == "1" {
      print(line)
    }
  }

  /// Appends `text` to the file at `path` with one `write` on an `O_APPEND` descriptor, so that the lines
  /// of tests running in parallel (or of several test processes) never interleave.
  private static func append(_ text: String, to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      return complain("cannot open \(path): \(String(cString: strerror(errno)))", losing: text)
    }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return complain("cannot write to \(path): \(String(cString: strerror(errno)))", losing: text)
      }
      written += count
    }
  }

  /// A figure that cannot be written is not lost silently: it goes to standard error with the reason.
  private static func complain(_ reason: String, losing text: String) {
    FileHandle.standardError.write(Data("PLD_FIGURES_FILE: \(reason); the figure was: \(text)".utf8))
  }
}
