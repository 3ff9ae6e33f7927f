import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Every failure is one sentence on standard error naming the file, key or version, with a non-zero
/// status — never a trap.
@Suite(.ownThread) struct ErrorTests {
  @Test func aMissingFileIsNamedAndNeverCreated() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("missing.db")
    let folder = directory.path("missing")
    for command in [["rollback", "k", "1"], ["prune", "--keep", "1"], ["prune", "k", "--keep", "1"]] {
      let inFolder = folder + "/app.db"
      let arguments = [command[0], inFolder] + command.dropFirst()
      let result = runInProcess(arguments)
      #expect(
        result == CommandResult(stdout: "", stderr: "Error: \"\(inFolder)\" does not exist.\n", status: 1),
        "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder))

    for command in [
      ["inspect"], ["keys"], ["get", "k"], ["history", "k"], ["diff", "k", "1", "2"],
      ["rollback", "k", "1"], ["prune", "--keep", "1"], ["export"], ["verify"], ["watch"],
    ] {
      let arguments = [command[0], path] + command.dropFirst()
      let result = runInProcess(arguments)
      #expect(
        result == CommandResult(stdout: "", stderr: "Error: \"\(path)\" does not exist.\n", status: 1),
        "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
  }

  @Test func filesThatAreNotStoresAreRefusedAndLeftAlone() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let text = try directory.write("just some notes\n", to: "notes.txt")
    let foreign = directory.path("foreign.db")
    try SchemaEditor.execute("CREATE TABLE contacts(name TEXT)", path: foreign, create: true)
    let foreignBytes = FileManager.default.contents(atPath: foreign)

    let notSQLite = runInProcess(["keys", text])
    #expect(notSQLite.stderr == "Error: \"\(text)\" is not an SQLite database; it was left untouched.\n")
    #expect(notSQLite.status == 1)
    #expect(runInProcess(["set", text, "k", "1"]).stderr == notSQLite.stderr)

    let other = runInProcess(["inspect", foreign])
    #expect(
      other.stderr
        == "Error: \"\(foreign)\" is another application's SQLite database, not a PersistentLiveData store.\n"
    )
    #expect(runInProcess(["set", foreign, "k", "1"]).stderr == other.stderr)
    #expect(FileManager.default.contents(atPath: foreign) == foreignBytes)
    #expect(FileManager.default.contents(atPath: text) == Data("just some notes\n".utf8))

    // A directory has its own sentence, from read and write commands alike.
    let folder = runInProcess(["keys", directory.path])
    #expect(folder.status == 1)
    #expect(
      folder.stderr
        == "Error: \"\(directory.path)\" is a directory, not a database file; give the path of a file, such as one inside it, or move the directory away.\n"
    )
    #expect(runInProcess(["set", directory.path, "k", "1"]).stderr == folder.stderr)
    #expect(runInProcess(["prune", directory.path, "--keep", "1"]).stderr == folder.stderr)
  }

  @Test func unknownKeysAndVersionsAreNamed() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    _ = runInProcess(["prune", path, "counter", "--keep", "2"])

    #expect(
      runInProcess(["get", path, "nope"]).stderr == "Error: Key \"nope\" is not stored in \"\(path)\".\n")
    #expect(runInProcess(["history", path, "nope"]).status == 1)
    #expect(
      runInProcess(["get", path, "counter", "--version", "1"]).stderr
        == "Error: Version 1 of key \"counter\" in \"\(path)\" has been pruned; the oldest kept is 4.\n")
    let zero = runInProcess(["get", path, "counter", "--version", "0"])
    #expect(zero.status == 64, "versions start at 1: a usage error")
    #expect(zero.stderr.hasPrefix("Error: --version must be at least 1.\nUsage: pld-tool get"), "\(zero)")
    #expect(
      runInProcess(["get", path, "counter", "--version", "6"]).stderr
        == "Error: Version 6 of key \"counter\" in \"\(path)\" does not exist; the latest is 5.\n")
    #expect(
      runInProcess(["prune", path, "nope", "--keep", "1"]).stderr
        == "Error: Key \"nope\" is not stored in \"\(path)\".\n")
  }

  @Test func usageErrorsFollowArgumentParser() {
    let missingArgument = runInProcess(["get", "app.db"])
    #expect(missingArgument.status == 64)
    #expect(
      missingArgument.stderr == """
        Error: Missing expected argument '<key>'
        Help:  <key>  The key.
        Usage: pld-tool get <database> [--json] <key> [--version <n>]
          See 'pld-tool get --help' for more information.

        """)
    let badNumber = runInProcess(["get", "app.db", "k", "--version", "three"])
    #expect(badNumber.status == 64)
    #expect(badNumber.stderr.hasPrefix("Error: The value 'three' is invalid for '--version <n>'"))
    #expect(runInProcess(["frobnicate"]).status == 64)
  }

  /// `pld-tool` alone is a usage error: the help, on standard error, status 64 (ArgumentParser alone
  /// would print it on standard output with status 0).
  @Test func noCommandPrintsTheHelpOnStandardErrorWithStatus64() {
    let help = runInProcess(["--help"])
    #expect(help.status == 0)
    #expect(runInProcess([]) == CommandResult(stdout: "", stderr: help.stdout, status: 64))
  }

  /// An unknown command is named, with the list of commands (ArgumentParser alone says
  /// `Error: 2 unexpected arguments: 'frob', 'app.db'`).
  @Test func anUnknownCommandIsNamedWithTheCommands() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let expected = """
      Error: Unknown command 'frob'; the commands are inspect, keys, get, history, diff, set, rollback, \
      prune, export, import, verify, watch, backup, delete, serve, replicas.
      Usage: pld-tool <subcommand> <database> [<arguments>] [--json]
             pld-tool --version
        See 'pld-tool --help' for more information.

      """
    for arguments in [["frob"], ["frob", path], ["frob", path, "k", "--json"]] {
      #expect(
        runInProcess(arguments) == CommandResult(stdout: "", stderr: expected, status: 64), "\(arguments)")
    }
    // Control characters in the name are escaped, as keys are.
    #expect(runInProcess(["fr\u{1B}[31mob"]).stderr.hasPrefix(#"Error: Unknown command 'fr\u{1B}[31mob'"#))
    // Known commands, ArgumentParser's help command and options are parsed as before.
    #expect(runInProcess(["help", "set"]).status == 0)
    #expect(runInProcess(["--frob"]).stderr.hasPrefix("Error: Unknown option '--frob'"))
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func helpAndVersionGoToStandardOutput() {
    let help = runInProcess(["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("OVERVIEW: Inspect, edit and watch a PersistentLiveData store.\n"))
    #expect(help.stderr.isEmpty)
    #expect(runInProcess(["--version"]) == CommandResult(stdout: "0.1.0\n", stderr: "", status: 0))
    let getHelp = runInProcess(["get", "--help"])
    #expect(getHelp.stdout.contains("--version <n>"))
  }
}
