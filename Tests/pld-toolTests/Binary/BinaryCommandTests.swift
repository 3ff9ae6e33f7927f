import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// The built `pld-tool` binary, run out of process: standard output, standard error and exit status
/// for every command, as a user's shell sees them. (The same commands run in process in `Commands/`.)
@Suite(.ownThread) struct BinaryCommandTests {
  private func run(_ arguments: [String], input: String = "") throws -> CommandResult {
    try ToolProcess.run(arguments, input: input)
  }

  @Test func helpAndVersion() throws {
    let help = try run(["--help"])
    #expect(help.status == 0)
    #expect(help.stderr == "")
    #expect(help.stdout.hasPrefix("OVERVIEW: Inspect, edit and watch a PersistentLiveData store.\n"))
    for command in [
      "inspect", "keys", "get", "history", "diff", "set", "rollback", "prune", "export", "import", "verify",
      "watch",
    ] {
      #expect(help.stdout.contains("\n  \(command) "), "\(command) is missing from --help")
    }
    #expect(try run(["--version"]) == CommandResult(stdout: "0.1.0\n", stderr: "", status: 0))
    let subcommandHelp = try run(["history", "--help"])
    #expect(subcommandHelp.stdout.contains("USAGE: pld-tool history <database> [--json] <key> [--limit <n>]"))
  }

  /// As a shell sees it: `pld-tool` alone and an unknown command are usage errors, status 64.
  @Test func noCommandAndAnUnknownCommandExit64() throws {
    let help = try run(["--help"])
    #expect(try run([]) == CommandResult(stdout: "", stderr: help.stdout, status: 64))

    let unknown = try run(["frob", "app.db"])
    #expect(unknown.status == 64)
    #expect(unknown.stdout == "")
    #expect(
      unknown.stderr.hasPrefix(
        "Error: Unknown command 'frob'; the commands are inspect, keys, get, history, diff, set, rollback, "))
    #expect(unknown.stderr.hasSuffix("  See 'pld-tool --help' for more information.\n"))
  }

  /// `backup` through a folder that is a symbolic link, and onto a link (refused), as a shell runs it.
  @Test func backupFollowsALinkedFolderAndRefusesALinkAtTheDestination() throws {
    try BackupCommandTests.checkLinkedFolderAndLinkAtTheDestination { try run($0) }
  }

  /// Every whole-number option and argument, out of bounds, negative or not a number, as a shell runs it.
  @Test func everyNumberSaysWhatItTakes() throws {
    try NumberArgumentTests.checkEveryNumber { try run($0) }
  }

  /// An empty (0-byte) file: refused as no store, left as it was; adopted with mode 0600 by `--create`.
  @Test func anEmptyFileIsNoStoreUntilCreateAdoptsIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.write("", to: "empty.db")
    #expect(chmod(path, 0o666) == 0)
    #expect(
      try run(["inspect", path])
        == CommandResult(stdout: "", stderr: "Error: \"\(path)\" is an empty file, not a store.\n", status: 1)
    )
    #expect(
      try run(["set", path, "k", "1"])
        == CommandResult(
          stdout: "",
          stderr: "Error: No store at \"\(path)\" (an empty file); pass --create to make it one.\n",
          status: 1))
    #expect(FileManager.default.contents(atPath: path) == Data())
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o666)
    #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    #expect(try run(["set", path, "k", "1", "--create"]).status == 0)
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    #expect(try run(["get", path, "k"]) == CommandResult(stdout: "1\n", stderr: "", status: 0))
  }

  /// A mistyped path creates nothing, also when the value or the lines come from standard input.
  @Test func writesToAMissingStoreCreateNothingWithoutCreate() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("typo/app.db")
    let message = "Error: No store at \"\(path)\"; pass --create to create one.\n"

    #expect(try run(["set", path, "k", "1"]) == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(
      try run(["set", path, "k", "-"], input: "1") == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(
      try run(["import", path, "-"], input: #"{"key":"k","value":1}"#)
        == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(!FileManager.default.fileExists(atPath: directory.path("typo")))

    #expect(
      try run(["import", path, "-", "--create"], input: #"{"key":"k","value":1}"#)
        == CommandResult(stdout: "Imported 1 version of 1 key from \"-\".\n", stderr: "", status: 0))
    #expect(
      try run(["set", path, "k", "2"])
        == CommandResult(stdout: "Wrote version 2 of key k.\n", stderr: "", status: 0))
  }

  @Test func everyReadCommand() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let inspect = try run(["inspect", path])
    #expect(inspect.status == 0)
    #expect(inspect.stdout.hasPrefix("File:            \(path)\n"))
    #expect(inspect.stderr == "")

    let keys = try run(["keys", path])
    #expect(
      keys.stdout.split(separator: "\n").map { $0.split(separator: " ").first ?? "" } == [
        "KEY", "counter", "settings", "theme",
      ])

    #expect(
      try run(["get", path, "theme"]) == CommandResult(stdout: "\"solarized\"\n", stderr: "", status: 0))
    #expect(try run(["get", path, "counter", "--version", "2"]).stdout == "2\n")

    let history = try run(["history", path, "counter", "--limit", "1", "--json"])
    let rows = try #require(try history.json() as? [[String: Any]])
    #expect(rows.count == 1)
    #expect(rows.first?["value"] as? Int == 5)

    let diff = try run(["diff", path, "counter", "1", "5"])
    #expect(
      diff
        == CommandResult(
          stdout: "key counter: version 1 → version 5\n~ $: 1 → 5\n1 change\n", stderr: "", status: 0))

    let export = try run(["export", path])
    #expect(try export.jsonLines().count == 9)

    #expect(
      try run(["verify", path])
        == CommandResult(
          stdout: "ok (3 keys, 9 versions)\nschema versions of key counter: 1 (5 versions)\n"
            + "schema versions of key settings: 1 (3 versions)\nschema versions of key theme: 1 (1 version)\n",
          stderr: "", status: 0))
  }

  @Test func everyWriteCommand() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    #expect(
      try run(["set", path, "theme", #""dracula""#])
        == CommandResult(stdout: "Wrote version 2 of key theme.\n", stderr: "", status: 0))
    #expect(
      try run(["set", path, "piped", "-"], input: #"{"from": "stdin"}"#).stdout
        == "Wrote version 1 of key piped.\n")
    #expect(
      try run(["rollback", path, "theme", "1"])
        == CommandResult(
          stdout: "Wrote version 3 of key theme with the content of version 1.\n", stderr: "", status: 0))
    #expect(
      try run(["prune", path, "--keep", "1"])
        == CommandResult(
          stdout: "Deleted 8 versions from 3 of 4 keys; kept the newest 1 of each.\n", stderr: "", status: 0))
    let file = try directory.write(#"{"key":"imported","value":[1,2,3]}"# + "\n", to: "in.jsonl")
    #expect(
      try run(["import", path, file])
        == CommandResult(stdout: "Imported 1 version of 1 key from \"\(file)\".\n", stderr: "", status: 0))

    // What the library sees afterwards.
    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    #expect(try store.keys() == ["counter", "imported", "piped", "settings", "theme"])
    let theme = try store.liveData("theme", default: "")
    #expect(theme.value == "solarized")
    #expect(theme.version == 3)
    #expect(try theme.history().map(\.version) == [3])
    #expect(try store.liveData("imported", default: [Int]()).value == [1, 2, 3])
  }

  @Test func errorsAreOneSentenceOnStandardError() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    _ = try run(["prune", path, "counter", "--keep", "2"])
    let missing = directory.path("missing.db")
    let text = try directory.write("hello", to: "notes.txt")
    let foreign = directory.path("other.db")
    try SchemaEditor.execute("CREATE TABLE t(x)", path: foreign, create: true)

    let cases: [([String], String)] = [
      (["get", missing, "k"], "Error: \"\(missing)\" does not exist.\n"),
      (["keys", text], "Error: \"\(text)\" is not an SQLite database; it was left untouched.\n"),
      (
        ["inspect", foreign],
        "Error: \"\(foreign)\" is another application's SQLite database, not a PersistentLiveData store.\n"
      ),
      (["get", path, "nope"], "Error: Key \"nope\" is not stored in \"\(path)\".\n"),
      (
        ["get", path, "counter", "--version", "2"],
        "Error: Version 2 of key \"counter\" in \"\(path)\" has been pruned; the oldest kept is 4.\n"
      ),
      (
        ["set", path, "k", "{"],
        "Error: The value for key \"k\" is not valid JSON: unexpected end of text, expected a member name at line 1, column 2.\n"
      ),
    ]
    for (arguments, message) in cases {
      #expect(try run(arguments) == CommandResult(stdout: "", stderr: message, status: 1), "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: missing))

    let usage = try run(["history", path])
    #expect(usage.status == 64)
    #expect(usage.stdout == "")
    #expect(
      usage.stderr == """
        Error: Missing expected argument '<key>'
        Help:  <key>  The key.
        Usage: pld-tool history <database> [--json] <key> [--limit <n>] [--all]
          See 'pld-tool history --help' for more information.

        """)
  }

  @Test func hostileKeysArePrintedEscaped() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let key = "x\u{1B}[31m\"; DROP TABLE pld_values; --\nfake line"
    let path = try directory.makeStore { store in
      try store.liveData(key, default: "").set("\u{1B}]0;title\u{07}")
    }

    let keys = try run(["keys", path])
    #expect(keys.status == 0)
    #expect(!keys.stdout.contains("\u{1B}"))
    #expect(keys.stdout.split(separator: "\n").count == 2)
    // Cut at 48 columns in the table, escaped all the same.
    #expect(keys.stdout.contains("\n" + #""x\u{1B}[31m\"; DROP TABLE pld_values; --\nfake…  "#))
    let missing = try run(["get", path, key + "!"])
    #expect(
      missing.stderr
        == #"Error: Key "x\u{1B}[31m\"; DROP TABLE pld_values; --\nfake line!" is not stored in ""# + path
        + "\".\n")
    #expect(try run(["get", path, key]).stdout == #""\u001b]0;title\u0007""# + "\n")
    let json = try #require(try run(["keys", path, "--json"]).json() as? [[String: Any]])
    #expect(json.first?["key"] as? String == key)
  }

  @Test func importIsAllOrNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let lines = (1...50).map { #"{"key":"k\#($0)","value":\#($0)}"# } + [#"{"key":"k51","value":nope}"#]
    let file = try directory.write(lines.joined(separator: "\n"), to: "bad.jsonl")
    let before = directory.snapshot("app.db")

    let result = try run(["import", path, file])
    #expect(result.status == 1)
    #expect(result.stdout == "")
    #expect(
      result.stderr
        == "Error: Line 51 of \"\(file)\" is not valid JSON: unexpected character \"n\", expected a value at line 1, column 22.\n"
    )
    #expect(directory.snapshot("app.db") == before)
    #expect(try run(["keys", path, "--json"]).stdout.contains("\"k1\"") == false)
  }
}
