import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `delete DB KEY`: the library's `removeKey` from the shell.
@Suite(.ownThread) struct DeleteCommandTests {
  @Test func aKeyIsDeletedWithEveryVersionAndItsNumbersAreNotReused() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    do {
      let store = try PersistentStore(path: path)
      let flags = try store.liveData("flags", default: 0)
      for value in 1...3 { try flags.set(value) }
      try store.liveData("other", default: "x").set("y")
      try store.close()
    }
    let result = runInProcess(["delete", path, "flags"])
    #expect(
      result
        == CommandResult(
          stdout: "Deleted key flags with its 3 versions (the latest was 3).\n", stderr: "", status: 0))
    #expect(runInProcess(["set", path, "flags", "9"]).status == 0)
    let store = try PersistentStore(path: path)
    #expect(try store.keys() == ["flags", "other"])
    #expect(try store.liveData("flags", default: 0).history().map(\.version) == [5])
    try store.close()

    let json = runInProcess(["delete", path, "other", "--json"])
    #expect(json.status == 0, "\(json)")
    let object = try #require(try json.json() as? [String: Any])
    #expect(object["key"] as? String == "other" && object["deleted"] as? Int == 1)
  }

  @Test func anUnknownKeyOrAMissingStoreIsAnErrorThatChangesNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = FileManager.default.contents(atPath: path)
    let unknown = runInProcess(["delete", path, "no-such-key"])
    #expect(unknown.status == 1 && unknown.stdout.isEmpty && !unknown.stderr.isEmpty, "\(unknown)")
    #expect(FileManager.default.contents(atPath: path) == before)
    let missing = runInProcess(["delete", directory.path("typo.db"), "k"])
    #expect(missing.status == 1)
    #expect(!FileManager.default.fileExists(atPath: directory.path("typo.db")))
  }
}
