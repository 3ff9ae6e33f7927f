import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// `StoreOptions.applicationIdentifier`: recorded by the file, checked at every open.
@Suite struct ApplicationIdentifierTests {
  static func options(_ application: String?, readOnly: Bool = false) -> StoreOptions {
    var options = StoreOptions()
    options.applicationIdentifier = application
    options.readOnly = readOnly
    return options
  }

  static func recorded(_ path: String) throws -> String {
    try SQLiteCLI.query(path, "SELECT value FROM pld_store_properties WHERE name = 'application'")
  }

  @Test func anotherApplicationsStoreIsRefusedAndLeftUntouched() throws {
    let folder = try TemporaryDirectory("application")
    let path = folder.path("todo.db")
    do {
      let store = try PersistentStore(path: path, options: Self.options("pld-todo"))
      try store.liveData("todo.list", default: [String]()).set(["milk"])
      try store.close()
    }
    #expect(try Self.recorded(path) == "pld-todo")
    let inspector = try StoreInspector(path: path)
    #expect(try inspector.summary().application == "pld-todo", "pld-tool inspect shows it")
    inspector.close()
    let before = fileBytes(path)
    let refused = PersistentLiveDataError.applicationMismatch(
      path: path, expected: "flags", found: "pld-todo")
    #expect(throws: refused) { try PersistentStore(path: path, options: Self.options("flags")) }
    #expect(throws: refused) {
      try PersistentStore(path: path, options: Self.options("flags", readOnly: true))
    }
    #expect(fileBytes(path) == before)
    #expect(refused.description.contains("pld-todo") && refused.description.contains("flags"))
    // The same application, and a store without the option, open it.
    try PersistentStore(path: path, options: Self.options("pld-todo")).close()
    let any = try PersistentStore(path: path)
    #expect(try any.keys() == ["todo.list"])
  }

  @Test func aStoreWithoutOneGainsItAtItsFirstOpenWithTheOption() throws {
    let folder = try TemporaryDirectory("application")
    let path = folder.path("flags.db")
    try PersistentStore(path: path).close()
    #expect(try Self.recorded(path) == "")
    // A read-only store checks but never records.
    try PersistentStore(path: path, options: Self.options("flags", readOnly: true)).close()
    #expect(try Self.recorded(path) == "")
    try PersistentStore(path: path, options: Self.options("flags")).close()
    #expect(try Self.recorded(path) == "flags")
    #expect(throws: PersistentLiveDataError.applicationMismatch(path: path, expected: "todo", found: "flags"))
    {
      try PersistentStore(path: path, options: Self.options("todo"))
    }
  }

  @Test func anEmptyIdentifierCountsAsNone() throws {
    let folder = try TemporaryDirectory("application")
    let path = folder.path("any.db")
    try PersistentStore(path: path, options: Self.options("")).close()
    #expect(try Self.recorded(path) == "", "nothing recorded")
    try PersistentStore(path: path, options: Self.options("flags")).close()
    try PersistentStore(path: path, options: Self.options("")).close()  // accepted like nil
  }

  @Test func theTodoExampleRecordsItsIdentifier() throws {
    let folder = try TemporaryDirectory("application")
    let path = folder.path("todo.db")
    let todo = try ChildProcess(
      ChildProcess.productsFolder.appendingPathComponent("pld-todo").path, ["add", "milk", "--db", path],
      mergingStandardError: true)
    todo.wait()
    #expect(todo.exitCode == 0, "\(todo.readAllLines())")
    #expect(try Self.recorded(path) == "pld-todo")
  }
}
