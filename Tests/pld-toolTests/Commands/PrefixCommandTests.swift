import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `keys DB --prefix P` and `export DB --prefix P`: the keys that start with P, compared by bytes (a
/// collection's members with P = NAME/).
@Suite(.ownThread) struct PrefixCommandTests {
  /// A store with a collection `todo`, a key that only looks like a member, and two spellings of one id.
  static func store(in directory: TemporaryDirectory) throws -> String {
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    let todos = try store.collection("todo", of: String.self)
    try todos.set("milk", for: "milk")
    try todos.set("bread", for: "a/b")
    try todos.set("nfc", for: "caf\u{E9}")
    try todos.set("nfd", for: "cafe\u{301}")
    try store.liveData("todox", default: "").set("not a member")
    try store.liveData("theme", default: "").set("dark")
    try store.close()
    return path
  }

  @Test func keysListsOnlyThePrefixInByteOrder() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.store(in: directory)
    let result = runInProcess(["keys", path, "--prefix", "todo/", "--json"])
    #expect(result.status == 0, "\(result)")
    let keys = try #require(try result.json() as? [[String: Any]]).map { $0["key"] as? String }
    #expect(keys == ["todo/a/b", "todo/cafe\u{301}", "todo/caf\u{E9}", "todo/milk"])
    let none = runInProcess(["keys", path, "--prefix", "nothing/"])
    #expect(none.status == 0 && none.stdout.contains("No keys that start with"), "\(none)")
  }

  @Test func exportWritesOnlyThePrefixAndImportReadsItBack() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.store(in: directory)
    let result = runInProcess(["export", path, "--prefix", "todo/"])
    #expect(result.status == 0, "\(result)")
    let lines = try result.jsonLines()
    #expect(lines.count == 4 && lines.allSatisfy { ($0["key"] as? String)?.hasPrefix("todo/") == true })
    #expect(runInProcess(["export", path, "theme", "--prefix", "todo/"]).status != 0, "a key or a prefix")

    let rows = directory.path("rows.jsonl")
    try result.stdout.write(toFile: rows, atomically: true, encoding: .utf8)
    let copy = directory.path("copy.db")
    #expect(runInProcess(["import", copy, rows, "--create"]).status == 0)
    let store = try PersistentStore(path: copy)
    #expect(
      try store.collection("todo", of: String.self).value.count == 3, "two spellings, one dictionary entry")
    #expect(try store.collection("todo", of: String.self).ids.count == 4)
    #expect(try store.keys() == store.keys(prefix: "todo/"))
  }
}
