import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Every whole-number option and argument says what it takes: a value below its bound (negative ones
/// included, which ArgumentParser alone took for options: "Missing value", "Missing expected argument")
/// and a value that is not a whole number are usage errors (status 64) that name the option and its
/// bound.
@Suite(.ownThread) struct NumberArgumentTests {
  /// Each whole-number option or argument: a command line with `VALUE` in its place, and its bound.
  static let numbers: [(arguments: [String], name: String, minimum: Int)] = [
    (["get", "DB", "theme", "--version", "VALUE"], "--version", 1),
    (["history", "DB", "theme", "--limit", "VALUE"], "--limit", 1),
    (["prune", "DB", "--keep", "VALUE"], "--keep", 1),
    (["set", "DB", "theme", #""x""#, "--schema-version", "VALUE"], "--schema-version", 1),
    (["watch", "DB", "--since", "VALUE"], "--since", 0),
    (["rollback", "DB", "theme", "VALUE"], "<version>", 1),
    (["diff", "DB", "counter", "VALUE", "2"], "<from>", 1),
    (["diff", "DB", "counter", "1", "VALUE"], "<to>", 1),
  ]

  /// `run` for each number in its place, in process or with the binary.
  static func checkEveryNumber(_ run: ([String]) throws -> CommandResult) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    for (arguments, name, minimum) in numbers {
      let command = arguments[0]
      func line(_ value: String) -> [String] {
        arguments.map { $0 == "DB" ? path : $0 == "VALUE" ? value : $0 }
      }
      let valueName = name.hasPrefix("<") ? name : name == "--since" ? "\(name) <since>" : "\(name) <n>"
      for value in ["-1", "-3", String(minimum - 1)] where Int(value) ?? 0 < minimum {
        let result = try run(line(value))
        #expect(result.status == 64, "\(command) \(name) \(value): \(result)")
        #expect(
          result.stderr.hasPrefix("Error: \(name) must be at least \(minimum).\nUsage: pld-tool \(command) "),
          "\(command) \(name) \(value): \(result)")
      }
      // An option takes the next word, whatever it is: `--limit --json` is a limit of "--json".
      for value in ["abc", "1.5", ""] + (name.hasPrefix("--") ? ["--json"] : []) {
        let result = try run(line(value))
        #expect(result.status == 64, "\(command) \(name) \(value): \(result)")
        #expect(
          result.stderr.hasPrefix(
            "Error: The value '\(value)' is invalid for '\(valueName)': a whole number of at least \(minimum) "
              + "is expected\n"), "\(command) \(name) \(value): \(result)")
      }
      let huge = try run(line("99999999999999999999"))
      #expect(
        huge.stderr.hasPrefix(
          "Error: The value '99999999999999999999' is invalid for '\(valueName)': out of range; a whole "
            + "number from \(minimum) to 9223372036854775807 is expected\n"), "\(command) \(name): \(huge)")
    }
    #expect(directory.snapshot("app.db") == before, "nothing was written")
  }

  @Test func everyNumberSaysWhatItTakes() throws {
    try Self.checkEveryNumber { runInProcess($0) }
  }

  /// A word that starts with `-` and a digit is a value wherever it stands, never an option: a negative
  /// JSON number is a value for `set`, a negative version gets its bound, `--` still works.
  @Test func aNegativeNumberIsAValueNotAnOption() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    #expect(
      runInProcess(["set", path, "counter", "-2"])
        == CommandResult(stdout: "Wrote version 6 of key counter.\n", stderr: "", status: 0))
    #expect(
      runInProcess(["set", "--json", path, "counter", "-0.5e1"]).status == 0)
    #expect(runInProcess(["get", path, "counter", "--version", "6"]).stdout == "-2\n")
    #expect(runInProcess(["get", path, "counter"]).stdout == "-5\n")
    #expect(
      runInProcess(["rollback", path, "--json", "counter", "-1"]).stderr.hasPrefix(
        "Error: <version> must be at least 1.\n"))
    #expect(runInProcess(["set", path, "counter", "--", "-3"]).status == 0)
    #expect(
      PLDTool.separatingNegativeNumbers(["get", "db", "k", "--version", "-1", "--json"])
        == ["get", "db", "k", "--version", "-1", "--json"], "an option's value stays where it is")
    #expect(
      PLDTool.separatingNegativeNumbers(["diff", "db", "--json", "k", "-1", "2"])
        == ["diff", "--json", "--", "db", "k", "-1", "2"])
  }
}
