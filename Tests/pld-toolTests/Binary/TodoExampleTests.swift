import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// The README's example program, `pld-todo`, run as a user would: a command that cannot do what it was
/// asked says so on standard error, exits 1 and writes no version.
///
/// `pld-todo` is built with the tests (`swift build --build-tests` builds every product of the package).
@Suite(.ownThread) struct TodoExampleTests {
  private static let program = ToolProcess.productPath("pld-todo")

  /// Runs `pld-todo --db database arguments…`, with `PLD_TODO_DB` pointing at `fallback` so that a run
  /// that ignored `--db` would show.
  private func run(
    _ arguments: [String], database: String, fallback: String
  ) throws -> CommandResult {
    try #require(
      FileManager.default.isExecutableFile(atPath: Self.program),
      "pld-todo is built with the tests: swift build --build-tests")
    return try ToolProcess.run(
      ["--db", database] + arguments, environment: ["PLD_TODO_DB": fallback], program: Self.program)
  }

  /// The versions the store keeps of item 1 (`todo/000001`), newest first, read by pld-tool.
  private func listVersions(_ database: String) throws -> [Int] {
    let result = runInProcess(["history", database, "todo/000001", "--json"])
    #expect(result.status == 0, "\(result)")
    let rows = try #require(try result.json() as? [[String: Any]])
    return rows.compactMap { $0["version"] as? Int }
  }

  @Test func doneWithAnItemThatDoesNotExistSaysSoAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = directory.path("todo.db")
    let fallback = directory.path("fallback.db")
    let added = try run(["add", "Buy", "milk"], database: database, fallback: fallback)
    #expect(added.status == 0, "\(added)")
    #expect(added.stdout.contains("  1. [ ] Buy milk\n"))
    #expect(try listVersions(database) == [1])

    for number in ["99", "2"] {
      #expect(
        try run(["done", number], database: database, fallback: fallback)
          == CommandResult(
            stdout: "",
            stderr: "pld-todo: there is no item \(number): the list has 1 item (pld-todo list shows them); "
              + "nothing was written\n",
            status: 1))
    }
    #expect(try listVersions(database) == [1])

    // Item 1 exists: ticked once, then reported without a new version.
    let done = try run(["done", "1"], database: database, fallback: fallback)
    #expect(done.status == 0, "\(done)")
    #expect(done.stdout.contains("  1. [x] Buy milk\n"))
    #expect(
      try run(["done", "1"], database: database, fallback: fallback)
        == CommandResult(stdout: "Item 1 is already done; nothing was written.\n", stderr: "", status: 0))
    #expect(try listVersions(database) == [2, 1])
    #expect(!FileManager.default.fileExists(atPath: fallback))
  }

  @Test func doneOnAnEmptyListAndUndoOfNothingAreErrors() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = directory.path("todo.db")
    let fallback = directory.path("fallback.db")

    #expect(
      try run(["done", "1"], database: database, fallback: fallback)
        == CommandResult(
          stdout: "",
          stderr: "pld-todo: there is no item 1: the list is empty (pld-todo list shows them); "
            + "nothing was written\n",
          status: 1))
    #expect(try run(["add", "Call", "Ann"], database: database, fallback: fallback).status == 0)
    let undone = try run(["undo"], database: database, fallback: fallback)
    #expect(undone.status == 0 && undone.stdout.contains("Removed item 1 (Call Ann)"), "\(undone)")
    #expect(
      try run(["undo"], database: database, fallback: fallback)
        == CommandResult(
          stdout: "",
          stderr: "pld-todo: nothing to undo: the list is empty; nothing was written\n",
          status: 1))
    #expect(runInProcess(["keys", database, "--prefix", "todo/"]).stdout.contains("No keys"))
  }

  /// Command lines that make no sense are refused before the store is opened: no version, no file.
  @Test func usageErrorsNameTheProblemAndOpenNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = directory.path("todo.db")
    let fallback = directory.path("fallback.db")
    #expect(try run(["add", "Buy", "milk"], database: database, fallback: fallback).status == 0)
    let usage = "usage: pld-todo [add TEXT | done N | undo | history | list] [--db PATH]\n"

    let cases: [([String], String)] = [
      (["done", "zero"], "zero is not an item number: item numbers are 1, 2, 3 … as pld-todo list shows"),
      (["done", "0"], "0 is not an item number: item numbers are 1, 2, 3 … as pld-todo list shows"),
      (["done", "-1"], "-1 is not an item number: item numbers are 1, 2, 3 … as pld-todo list shows"),
      (["done", "1x"], "1x is not an item number: item numbers are 1, 2, 3 … as pld-todo list shows"),
      (["done"], "done needs an item number: pld-todo done 2"),
      (["done", "1", "2"], "done takes one item number, but was given 1 2"),
      (["add"], "add needs a title: pld-todo add Buy milk"),
      (["add", " ", ""], "add needs a title: pld-todo add Buy milk"),
      (["undo", "2"], "undo takes no arguments, but was given 2"),
      (["list", "--all"], "list takes no arguments, but was given --all"),
      (["history", "5"], "history takes no arguments, but was given 5"),
      (["frob"], "unknown command frob; try add, done, undo, history or list"),
      (["--verbose"], "unknown option --verbose; try add, done, undo, history or list"),
    ]
    for (arguments, reason) in cases {
      #expect(
        try run(arguments, database: database, fallback: fallback)
          == CommandResult(stdout: "", stderr: "pld-todo: \(reason)\n" + usage, status: 1),
        "\(arguments)")
    }
    #expect(try listVersions(database) == [1])

    // A usage error creates no store, and --db without a path is one (not the default store).
    let missing = directory.path("new/todo.db")
    #expect(try run(["done", "x"], database: missing, fallback: fallback).status == 1)
    #expect(!FileManager.default.fileExists(atPath: directory.path("new")))
    try #require(FileManager.default.isExecutableFile(atPath: Self.program))
    let noPath = try ToolProcess.run(
      ["list", "--db"], environment: ["PLD_TODO_DB": fallback], program: Self.program)
    #expect(
      noPath
        == CommandResult(
          stdout: "", stderr: "pld-todo: --db needs a path: pld-todo --db todo.db list\n" + usage, status: 1))
    #expect(!FileManager.default.fileExists(atPath: fallback))
  }
}
