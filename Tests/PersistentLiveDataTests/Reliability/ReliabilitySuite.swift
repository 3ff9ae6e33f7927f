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
/// Its suites run in two chains, one suite after another within each and the two chains side by side:
/// ``InjectedFaults`` holds what runs through the fault-injecting VFS registered in this process (the
/// I/O-error loop, and the power-loss checks, which once read a disk I/O error run beside it, and hostile
/// input's large values, to even the chains), and ``Timed`` the rest, with the timed power-loss window
/// and the process kills. One chain took the test
/// step's whole length (297 s of it in a CI run, while every other suite had ended after 132 s). Each
/// test runs on a thread of its own (`.ownThread`): they wait for child processes and loop for seconds,
/// and on the cooperative pool they held one of its two threads for the whole run.
@Suite(.ownThread) enum Reliability {
  /// The suites that use the fault-injecting VFS (`pld_crashsim`), and hostile input, one at a time.
  @Suite(.serialized) enum InjectedFaults {}

  /// The other reliability suites, one at a time: the timed power-loss window, process kills, damaged
  /// files, hostile input's sizes, read-only and full disks.
  @Suite(.serialized) enum Timed {}

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
