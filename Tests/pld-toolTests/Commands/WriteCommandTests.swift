import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import pld_tool

/// `set`, `rollback`, `prune` write through the library: an application's store sees the same
/// versions, values and history afterwards.
@Suite(.ownThread) struct WriteCommandTests {
  @Test func setWritesTheNextVersionThatTheLibraryReads() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["set", path, "settings", #"{"theme":"sepia","fontSize":16,"tags":[]}"#])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "Wrote version 4 of key settings.\n")

    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let settings = try store.liveData("settings", default: Settings(theme: "", fontSize: 0, tags: []))
    #expect(settings.version == 4)
    #expect(settings.value == Settings(theme: "sepia", fontSize: 16, tags: []))
    #expect(try settings.history().map(\.version) == [4, 3, 2, 1])
  }

  @Test func setWithJSONOutputReportsTheStoredRow() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("new.db")

    let result = runInProcess(["set", path, "greeting", #"{ "b": 1, "a": "hi" }"#, "--json", "--create"])
    #expect(result.status == 0, "\(result)")
    let json = try #require(try result.json() as? [String: Any])
    #expect(json["key"] as? String == "greeting")
    #expect(json["version"] as? Int == 1)
    #expect(json["size"] as? Int == #"{"a":"hi","b":1}"#.utf8.count)  // the library's canonical form
    #expect((json["value"] as? [String: Any])?["a"] as? String == "hi")
  }

  @Test func setRefusesInvalidJSONAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")

    let result = runInProcess(["set", path, "settings", #"{"theme": dark}"#])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "Error: The value for key \"settings\" is not valid JSON: unexpected character \"d\", expected a value at line 1, column 11.\n"
    )
    #expect(directory.snapshot("app.db") == before)

    let missing = directory.path("never.db")
    #expect(runInProcess(["set", missing, "k", "nope"]).status == 1)
    #expect(!FileManager.default.fileExists(atPath: missing))
  }

  @Test func rollbackWritesANewVersionWithTheOldContent() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["rollback", path, "settings", "1"])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "Wrote version 4 of key settings with the content of version 1.\n")

    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let settings = try store.liveData("settings", default: Settings(theme: "", fontSize: 0, tags: []))
    #expect(settings.version == 4)
    #expect(settings.value == (try settings.value(at: 1)))
  }

  @Test func rollbackToAPrunedVersionNamesIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    #expect(runInProcess(["prune", path, "counter", "--keep", "2"]).status == 0)
    let before = directory.snapshot("app.db")

    let result = runInProcess(["rollback", path, "counter", "2"])
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "Error: Version 2 of key \"counter\" in \"\(path)\" has been pruned; the oldest kept is 4.\n")
    #expect(directory.snapshot("app.db") == before)
  }

  @Test func pruneKeepsTheNewestVersionsOfEachKey() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["prune", path, "--keep", "2", "--json"])
    #expect(result.status == 0, "\(result)")
    let json = try #require(try result.json() as? [String: Any])
    #expect(json["deleted"] as? Int == 4)  // settings 1; counter 1, 2, 3
    #expect(json["keep"] as? Int == 2)
    #expect(json["key"] is NSNull)

    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let counter = try store.liveData("counter", default: 0)
    #expect(try counter.history().map(\.version) == [5, 4])
    #expect(try counter.value(at: 3) == nil)
    // Versions are never reused after pruning.
    try counter.set(99)
    #expect(counter.version == 6)
  }

  @Test func pruneOneKeyLeavesTheOthers() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["prune", path, "counter", "--keep", "1"])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "Deleted 4 versions of key counter; kept its newest 1 version.\n")
    let keys = try #require(try runInProcess(["keys", path, "--json"]).json() as? [[String: Any]])
    #expect(keys.map { $0["versions"] as? Int } == [1, 3, 1])
  }

  /// One key named: the sentence speaks of that key; "of each" only when every key was pruned.
  @Test func pruneReportsWhatItKeptOfTheKeyItWasGiven() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    #expect(
      runInProcess(["prune", path, "counter", "--keep", "3"])
        == CommandResult(
          stdout: "Deleted 2 versions of key counter; kept its newest 3 versions.\n", stderr: "", status: 0))
    #expect(
      runInProcess(["prune", path, "settings", "--keep", "3"])
        == CommandResult(
          stdout: "Deleted 0 versions of key settings; kept its newest 3 versions.\n", stderr: "", status: 0))
    #expect(
      runInProcess(["prune", path, "--keep", "2"])
        == CommandResult(
          stdout: "Deleted 2 versions from 2 of 3 keys; kept the newest 2 of each.\n", stderr: "", status: 0))
  }

  @Test func pruneRefusesKeepZeroAsAUsageError() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["prune", path, "--keep", "0"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("Error: --keep must be at least 1.\nUsage: pld-tool prune"))
  }

  @Test func writesAreRefusedOnANewerSchema() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    try SchemaEditor.setUserVersion(99, path: path)
    let before = directory.snapshot("app.db")

    let write = runInProcess(["set", path, "k", "1"])
    #expect(write.status == 1)
    #expect(
      write.stderr
        == "Error: \"\(path)\" has schema version 99, newer than the \(Migrator.latestVersion) this library supports.\n"
    )
    let read = runInProcess(["keys", path])
    #expect(read.status == 1)
    #expect(read.stderr == write.stderr)
    #expect(directory.snapshot("app.db") == before)
  }
}
