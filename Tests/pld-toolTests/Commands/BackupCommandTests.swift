import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `backup DB DEST`: a single-file copy of a store in use, made by reading it only; nothing at DEST is
/// ever overwritten.
@Suite(.ownThread) struct BackupCommandTests {
  @Test func aStoreStillOpenWithItsCommitsInTheWALIsCopiedWhole() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("flags.db")
    // A daemon that has not closed its store: its commits are in flags.db-wal.
    let store = try PersistentStore(path: path)
    let flags = try store.liveData("flags", default: [String: Bool]())
    for index in 1...10 { try flags.update { $0["f\(index)"] = true } }
    let beat = try store.liveData("heartbeat", default: 0)
    for value in 1...3 { try beat.set(value) }
    let expected = (flags: try flags.history(), beat: try beat.history())
    let databaseBefore = FileManager.default.contents(atPath: path)
    #expect(FileManager.default.fileExists(atPath: path + "-wal"))

    let copy = directory.path("flags-backup.db")
    let result = runInProcess(["backup", path, copy])
    #expect(result == CommandResult(stdout: "Copied \"\(path)\" to \"\(copy)\".\n", stderr: "", status: 0))
    #expect(FileManager.default.contents(atPath: path) == databaseBefore, "the store is only read")
    #expect(!FileManager.default.fileExists(atPath: copy + "-wal"), "one file")

    let restored = try PersistentStore(path: copy)
    #expect(try restored.keys() == ["flags", "heartbeat"])
    #expect(try restored.liveData("flags", default: [String: Bool]()).history() == expected.flags)
    #expect(try restored.liveData("heartbeat", default: 0).history() == expected.beat)
    try restored.close()
    try store.close()

    let json = runInProcess(["backup", path, directory.path("second.db"), "--json"])
    #expect(json.status == 0, "\(json)")
    let object = try #require(try json.json() as? [String: Any])
    #expect(object["backup"] as? String == directory.path("second.db"))
    #expect(object["keys"] as? Int == 2)
  }

  @Test func anExistingDestinationIsAnErrorAndStaysAsItWas() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let taken = try directory.write("precious", to: "taken.db")
    let empty = try directory.write("", to: "empty.db")
    for destination in [taken, empty] {
      let before = FileManager.default.contents(atPath: destination)
      let result = runInProcess(["backup", path, destination])
      #expect(result.status == 1)
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.contains("already exists; a backup never overwrites anything"), "\(result)")
      #expect(FileManager.default.contents(atPath: destination) == before)
    }
  }

  /// DEST through a folder that is a symbolic link (`/tmp` on macOS, the README's example) is copied
  /// there; a symbolic link at DEST itself is refused and left as it is.
  @Test func aLinkedFolderOnTheWayIsFollowedAndALinkAtTheDestinationRefused() throws {
    try Self.checkLinkedFolderAndLinkAtTheDestination { runInProcess($0) }
  }

  /// The test above, running commands with `run` (in process here, the binary in `BinaryCommandTests`).
  static func checkLinkedFolderAndLinkAtTheDestination(_ run: ([String]) throws -> CommandResult) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    try FileManager.default.createDirectory(
      atPath: directory.path("real"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: directory.path("tmp"), withDestinationPath: "real")

    let copy = directory.path("tmp/app-backup.db")
    let result = try run(["backup", path, copy])
    #expect(result == CommandResult(stdout: "Copied \"\(path)\" to \"\(copy)\".\n", stderr: "", status: 0))
    let keys = try #require(
      try run(["keys", directory.path("real/app-backup.db"), "--json"]).json() as? [Any])
    #expect(keys.count == 3)

    let other = try directory.write("keep me", to: "other.db")
    let link = directory.path("tmp/link.db")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: other)
    let refused = try run(["backup", path, link])
    #expect(refused.status == 1)
    #expect(refused.stdout.isEmpty)
    #expect(refused.stderr.contains("already exists; a backup never overwrites anything"), "\(refused)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == other)
    #expect(FileManager.default.contents(atPath: other) == Data("keep me".utf8))
  }

  @Test func aMissingStoreIsAnErrorThatCreatesNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let copy = directory.path("copy.db")
    let result = runInProcess(["backup", directory.path("typo.db"), copy])
    #expect(result.status == 1)
    #expect(!result.stderr.isEmpty && result.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: copy))
    #expect(!FileManager.default.fileExists(atPath: directory.path("typo.db")))
  }
}
