import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// Runs the README's example program, `pld-todo`, as a user would: twice on the same database.
@Suite(.ownThread) struct ExampleProgramTests {
  private var executable: String { ChildProcess.productsFolder.appendingPathComponent("pld-todo").path }

  /// Runs pld-todo; its stderr is captured (not passed through to the test output) and returned.
  private func run(_ arguments: [String]) throws -> (lines: [String], errors: String, exitCode: Int32?) {
    let process = try ChildProcess(executable, arguments)
    let lines = process.readAllLines()
    process.wait()
    return (lines, process.standardError, process.exitCode)
  }

  @Test func stateContinuesAcrossRunsWithObserversAndHistory() throws {
    try #require(FileManager.default.isExecutableFile(atPath: executable), "pld-todo is built with the tests")
    let folder = try TemporaryDirectory()
    let database = folder.path("data/pld-todo/todo.db")

    let first = try run(["--db", database])
    #expect(first.exitCode == 0, "\(first.errors)")
    #expect(first.errors.isEmpty)
    #expect(first.lines.contains { $0.hasPrefix("Run #1") })
    #expect(first.lines.contains("  1. [ ] Item added by run #1"))
    #expect(first.lines.contains { $0.contains("observer: the list changed (1 item, 1 open)") })
    #expect(first.lines.contains { $0.contains("pld-tool keys \(database) --prefix todo/") })

    let second = try run(["--db", database])
    #expect(second.exitCode == 0, "\(second.errors)")
    #expect(second.errors.isEmpty)
    #expect(second.lines.contains { $0.hasPrefix("Run #2") })
    #expect(second.lines.contains("  2. [ ] Item added by run #2"))
    #expect(second.lines.contains { $0.contains("observer: the list changed (2 items, 2 open)") })
    #expect(
      second.lines.contains { $0.hasPrefix("  item 2 v1 ") }
        && second.lines.contains { $0.hasPrefix("  item 1 v1 ") })

    // Each item is its own key: the third run ticks item 1 (its version 2) and adds item 3.
    let third = try run(["--db", database])
    #expect(third.lines.contains("  1. [x] Item added by run #1"), "\(third.lines)")
    let store = try PersistentStore(path: database, options: Self.readOnly)
    #expect(try store.keys(prefix: "todo/") == ["todo/000001", "todo/000002", "todo/000003"])
    #expect(try store.liveData("todo/000001", default: Item(title: "")).version == 2)
    #expect(try store.liveData("todo/000002", default: Item(title: "")).version == 1)
    try store.close()

    let undo = try run(["--db", database, "undo"])
    #expect(undo.exitCode == 0, "\(undo.errors)")
    #expect(undo.errors.isEmpty)
    #expect(undo.lines.contains("Removed item 3 (Item added by run #3), which the undone change added."))
    let again = try run(["--db", database, "undo"])
    #expect(
      again.lines.contains("Restored item 1 to the content of its version 1, as version 3."), "\(again.lines)"
    )
    #expect(again.lines.contains("  1. [ ] Item added by run #1"))
  }

  static var readOnly: StoreOptions {
    var options = StoreOptions()
    options.readOnly = true
    return options
  }

  struct Item: Codable, Sendable, Equatable {
    var title: String
    var done = false
  }

  struct OldList: Codable, Sendable, Equatable {
    var items: [Item] = []
  }

  /// A store of the release that kept the whole list in one value (`todo.list`): its items move into the
  /// collection at the first start, once; the old key keeps its history, with a last, empty version that
  /// says why.
  @Test func aListKeptInOneValueMovesIntoTheCollectionOnce() throws {
    try #require(FileManager.default.isExecutableFile(atPath: executable), "pld-todo is built with the tests")
    let folder = try TemporaryDirectory()
    let database = folder.path("todo.db")
    do {
      var options = StoreOptions()
      options.applicationIdentifier = "pld-todo"
      let store = try PersistentStore(path: database, options: options)
      let list = try store.liveData("todo.list", default: OldList())
      try list.set(OldList(items: [Item(title: "Buy milk")]))
      try list.set(OldList(items: [Item(title: "Buy milk", done: true), Item(title: "Call Ann")]))
      try store.close()
    }
    let moved = try run(["--db", database, "list"])
    #expect(moved.exitCode == 0, "\(moved.errors)")
    #expect(moved.lines == ["To-do list (2 items):", "  1. [x] Buy milk", "  2. [ ] Call Ann"])
    let again = try run(["--db", database, "add", "Write"])
    #expect(
      again.lines.suffix(3) == ["  1. [x] Buy milk", "  2. [ ] Call Ann", "  3. [ ] Write"], "moved once")

    let store = try PersistentStore(path: database, options: Self.readOnly)
    let old = try store.liveData("todo.list", default: OldList())
    let history = try old.history()
    #expect(history.map(\.version) == [3, 2, 1], "the old key's history is kept")
    #expect(history.first?.value == OldList() && history.first?.attribution?.author == "pld-todo")
    #expect(history.first?.attribution?.reason?.contains("into the todo collection") == true)
    let items = try store.collection("todo", of: Item.self)
    #expect(items.ids == ["000001", "000002", "000003"])
    #expect(
      try items.member("000001", default: Item(title: "")).history().first?.attribution?.author == "pld-todo")
    try store.close()
  }

  @Test func badUsageIsOneClearErrorNotACrash() throws {
    try #require(FileManager.default.isExecutableFile(atPath: executable), "pld-todo is built with the tests")
    let folder = try TemporaryDirectory()
    let result = try run(["--db", folder.path("todo.db"), "done", "zero"])
    #expect(result.exitCode == 1)
    #expect(result.lines.isEmpty)
    // One message naming the problem, then the usage line (TodoExampleTests checks every word of both).
    #expect(result.errors.hasPrefix("pld-todo: zero is not an item number"), "\(result.errors)")
    #expect(result.errors.contains("\nusage: pld-todo "), "\(result.errors)")
    #expect(!FileManager.default.fileExists(atPath: folder.path("todo.db")), "a usage error creates no file")
  }
}
