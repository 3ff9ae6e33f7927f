import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// `backup(to:)`: a consistent single-file copy of a store in use, that never overwrites anything.
@Suite struct BackupTests {
  /// Every version of `key` in the store at `path`, oldest first (version, value, writtenAt).
  static func versions(of key: String, in path: String) throws -> [Versioned<Int>] {
    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    return try versions(of: key, in: store)
  }

  static func versions(of key: String, in store: PersistentStore) throws -> [Versioned<Int>] {
    try store.liveData(key, default: 0).history().reversed()
  }

  @Test func aCopyWhileThisAndAnotherProcessWriteHoldsEveryCommitBeforeItAndOpensAsAStore() throws {
    let folder = try TemporaryDirectory("backup")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let local = try store.liveData("local", default: 0)
    let child = try ChildProcess(ChildProcess.testChildPath, ["ack-loop", path, "remote"])
    defer {
      child.kill(SIGKILL)
      child.wait()
    }
    var acknowledged: Int64 = 0
    while acknowledged < 50, let line = child.readLine() {
      acknowledged = acknowledgedVersions([line]).last ?? acknowledged
    }
    // This process writes too, from another thread, while the copy is made.
    let stop = Locked(false)
    let writer = Thread {
      var next = 1
      while !stop.withLock({ $0 }) {
        _ = try? local.set(next)
        next += 1
      }
    }
    writer.start()
    while local.version < 50 { usleep(1_000) }
    let localBefore = local.version
    let backup = folder.path("copy.db")
    try store.backup(to: backup)
    stop.withLock { $0 = true }
    while !writer.isFinished { usleep(1_000) }

    // Nothing is left beside the copy: one file.
    #expect(!FileManager.default.fileExists(atPath: backup + "-wal"))
    #expect(permissions(backup) == 0o600)
    for (key, before) in [("remote", acknowledged), ("local", localBefore)] {
      let copied = try Self.versions(of: key, in: backup)
      let source = try Self.versions(of: key, in: store)
      #expect(copied.count >= Int(before), "\(key): every version committed before the backup began")
      #expect(copied.map(\.version) == Array(1...Int64(copied.count)), "\(key): versions 1 … n, no gap")
      #expect(copied.map(\.value) == copied.map { Int($0.version) }, "\(key): each version's own value")
      // The same versions, values and times as the source: a prefix of it.
      #expect(copied == Array(source.prefix(copied.count)), "\(key): versions and writtenAt kept")
    }
  }

  @Test func aCopyHoldsWhatIsStillInTheWALOfAStoreNotClosed() throws {
    let folder = try TemporaryDirectory("backup")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let flags = try store.liveData("flags", default: [String: Bool]())
    for index in 1...20 { try flags.update { $0["flag\(index)"] = true } }
    // Still in state.db-wal: a plain copy of state.db would miss these.
    #expect((try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0) > 0)
    try store.backup(to: folder.path("copy.db"))
    let copy = try PersistentStore(path: folder.path("copy.db"))
    let restored = try copy.liveData("flags", default: [String: Bool]())
    #expect(restored.version == 20)
    #expect(restored.value.count == 20)
    #expect(try copy.keys() == ["flags"])
  }

  /// The example of the article "Persistence and durability", as it is written there.
  @Test func theArticlesExampleWorksAsWritten() throws {
    let temporary = try TemporaryDirectory("backup")
    let folder = temporary.path
    let store = try PersistentStore(path: folder + "/state.db")
    try store.liveData("theme", default: "light").set("dark")
    try store.backup(to: folder + "/state-backup.db")
    let copy = try PersistentStore(path: folder + "/state-backup.db")
    let theme = try copy.liveData("theme", default: "light")  // "dark", version 1
    #expect(theme.value == "dark" && theme.version == 1)
  }

  @Test func anInMemoryStoreIsCopiedToAFile() throws {
    let folder = try TemporaryDirectory("backup")
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    for value in 1...5 { try count.set(value) }
    try store.backup(to: folder.path("copy.db"))
    let copied = try Self.versions(of: "count", in: folder.path("copy.db"))
    #expect(copied.map(\.value) == [1, 2, 3, 4, 5])
    #expect(copied == (try Self.versions(of: "count", in: store)))
  }

  @Test(arguments: ["a file", "an empty file", "a folder", "a symbolic link", "a dangling symbolic link"])
  func nothingAlreadyThereIsOverwritten(_ what: String) throws {
    let folder = try TemporaryDirectory("backup")
    let store = try PersistentStore(path: folder.path("state.db"))
    try store.liveData("count", default: 0).set(1)
    let destination = folder.path("copy.db")
    let other = folder.path("other")
    try writeFile(other, Data("keep me".utf8))
    switch what {
    case "a file": try writeFile(destination, Data("keep me".utf8))
    case "an empty file": try writeFile(destination, Data())
    case "a folder":
      try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
    case "a symbolic link":
      try FileManager.default.createSymbolicLink(atPath: destination, withDestinationPath: other)
    default:
      try FileManager.default.createSymbolicLink(
        atPath: destination, withDestinationPath: folder.path("none"))
    }
    let before = fileBytes(destination)
    let error = expectStoreError("fileExists", Comment(rawValue: what)) { try store.backup(to: destination) }
    #expect(error == .fileExists(path: destination))
    #expect(error?.description.contains("never overwrites") == true)
    #expect(fileBytes(destination) == before, "\(what) is unchanged")
    #expect(fileBytes(other) == Data("keep me".utf8))
    #expect(!FileManager.default.fileExists(atPath: folder.path("none")))
  }

  /// A folder on the way to the copy that is a symbolic link (`/tmp` on macOS) is followed, as when a
  /// store is created through it; only a link at the destination itself is refused (above).
  @Test(arguments: ["a file store", "an in-memory store"])
  func aSymbolicLinkToTheFolderOnTheWayIsFollowed(_ kind: String) throws {
    let folder = try TemporaryDirectory("backup")
    try FileManager.default.createDirectory(atPath: folder.path("real"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: folder.path("link"), withDestinationPath: "real")
    let store = try kind == "a file store" ? PersistentStore(path: folder.path("state.db")) : .inMemory()
    let count = try store.liveData("count", default: 0)
    for value in 1...3 { try count.set(value) }

    try store.backup(to: folder.path("link/copy.db"))
    #expect(permissions(folder.path("real/copy.db")) == 0o600)
    #expect(!FileManager.default.fileExists(atPath: folder.path("real/copy.db-wal")))
    let copied = try Self.versions(of: "count", in: folder.path("link/copy.db"))
    #expect(copied.map(\.value) == [1, 2, 3])
    #expect(copied == (try Self.versions(of: "count", in: store)))

    // A link at the destination is still refused, also behind a linked folder.
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("real/taken.db"), withDestinationPath: folder.path("elsewhere.db"))
    let error = expectStoreError("fileExists") { try store.backup(to: folder.path("link/taken.db")) }
    #expect(error == .fileExists(path: folder.path("link/taken.db")))
    #expect(!FileManager.default.fileExists(atPath: folder.path("elsewhere.db")))
  }

  @Test func aMissingFolderOrAClosedStoreIsAClearErrorAndLeavesNothing() throws {
    let folder = try TemporaryDirectory("backup")
    let store = try PersistentStore(path: folder.path("state.db"))
    try store.liveData("count", default: 0).set(1)
    let nowhere = folder.path("missing/copy.db")
    let error = expectStoreError("cannotOpen") { try store.backup(to: nowhere) }
    #expect(
      error?.description.contains("its folder \"\(folder.path("missing"))\" does not exist; create it first")
        == true, "\(String(describing: error))")
    #expect(!FileManager.default.fileExists(atPath: folder.path("missing")))
    try store.close()
    expectStoreError("storeClosed") { try store.backup(to: folder.path("copy.db")) }
    #expect(!FileManager.default.fileExists(atPath: folder.path("copy.db")))
  }

  @Test(.enabled(if: isRoot, "mounting a small tmpfs needs root"))
  func aFullDiskFailsTheBackupAndRemovesThePartialCopy() throws {
    let folder = try TemporaryDirectory("backup")
    let store = try PersistentStore(path: folder.path("state.db"))
    let big = try store.liveData("big", default: "")
    for index in 1...40 { try big.set(String(repeating: "\(index % 10)", count: 50_000)) }
    let fileSystem = try SmallFileSystem(size: "1m")
    defer { fileSystem.unmount() }
    let destination = "\(fileSystem.path)/copy.db"
    expectStoreError("diskFull") { try store.backup(to: destination) }
    #expect(!FileManager.default.fileExists(atPath: destination), "no partial copy is left")
    #expect(big.version == 40)
  }
}

/// `reset()`: the default as a new version, undoable by rollback.
@Suite struct ResetTests {
  @Test func resetWritesTheDefaultAsANewVersionThatRollbackUndoes() throws {
    let folder = try TemporaryDirectory("reset")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let theme = try store.liveData("theme", default: "light")
    try theme.set("dark")  // version 1
    try theme.reset()  // version 2: "light"
    #expect(theme.value == "light" && theme.version == 2)
    #expect(try theme.history().map(\.value) == ["light", "dark"], "the history is kept")
    try theme.rollback(to: 1)  // version 3: "dark" again
    #expect(theme.value == "dark" && theme.version == 3)
    try store.close()
    let reopened = try PersistentStore(path: path)
    let restored = try reopened.liveData("theme", default: "light")
    #expect(restored.value == "dark" && restored.version == 3)
    #expect(try restored.history().map(\.version) == [3, 2, 1])
  }

  @Test @MainActor func observersHearAResetOnTheMainActorBeforeItReturns() throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    try count.set(5)
    var heard: [Int] = []
    let observer = count.observeForever(receiveCurrent: false) { heard.append($0) }
    defer { observer.cancel() }
    try count.reset()
    #expect(heard == [0])
    #expect(count.version == 2)
  }
}
