import Foundation
import PLDTestSupport
import Testing

/// The reliability suite: process kills, simulated power loss, I/O errors, disk full and read-only files,
/// damaged files, hostile input and file security. Run it with `swift test --filter Reliability`.
///
/// The loops record one `RELIABILITY …` line each with their figures (iterations, losses, corruptions),
/// which the README's guarantee table quotes: not among the test output, but in the file named by
/// `PLD_FIGURES_FILE` (`.ci/run` prints it) and on stdout with `PLD_PRINT_FIGURES=1` (``figure(_:)``).
/// Their length is set by environment variables:
///
/// | variable | default | what |
/// |---|---|---|
/// | `PLD_CRASH_ITERATIONS` | 300 (50 under a sanitizer) | SIGKILLs per durability |
/// | `PLD_POWERLOSS_ITERATIONS` | 150 (30 under a sanitizer) | simulated power losses per durability |
///
/// Its suites run one after another: the I/O-error loop injects faults through a VFS registered in this
/// process, and the power-loss window is timed (run beside the other suites, the power-loss checks once
/// read a disk I/O error). Each test runs on a thread of its own (`.ownThread`): they wait for child
/// processes and loop for seconds, and on the cooperative pool they held one of its two threads for the
/// whole run.
@Suite(.serialized, .ownThread) enum Reliability {
  /// Whether the suite runs under TSan/ASan (`.ci/run` sets `PLD_TESTS_UNDER_SANITIZER=1`): the loops are
  /// shortened there, since the sanitizers check memory and threads, not crash statistics.
  static var underSanitizer: Bool {
    ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] == "1"
  }

  /// A positive integer from the environment, or `fallback` (`sanitized` under a sanitizer).
  static func iterations(_ variable: String, default fallback: Int, sanitized: Int) -> Int {
    if let text = ProcessInfo.processInfo.environment[variable], let value = Int(text), value > 0 {
      return value
    }
    return underSanitizer ? sanitized : fallback
  }

  /// Records a figure line for the README's table where ``TestFigures`` says: appended to
  /// `PLD_FIGURES_FILE`, printed only with `PLD_PRINT_FIGURES=1` (the library never prints).
  static func figure(_ line: String) {
    TestFigures.record("RELIABILITY \(line)")
  }
}
