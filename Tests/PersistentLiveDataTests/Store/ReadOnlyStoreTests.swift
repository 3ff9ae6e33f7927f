import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// `StoreOptions.readOnly`: never creates, migrates or writes; every write throws `readOnly` with
/// nothing run; other processes' writes are seen; a file whose folder cannot be written opens.
@Suite struct ReadOnlyStoreTests {
  static var readOnly: StoreOptions {
    var options = StoreOptions()
    options.readOnly = true
    return options
  }

  struct Settings: Codable, Sendable, Equatable {
    var theme = "light"
  }

  /// A store with settings at versions 1…3 and a counter at 1, closed.
  static func makeStore(_ folder: TemporaryDirectory) throws -> String {
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let settings = try store.liveData("settings", default: Settings())
    for theme in ["dark", "blue", "green"] { try settings.set(Settings(theme: theme)) }
    try store.liveData("counter", default: 0).set(1)
    try store.close()
    return path
  }

  @Test func aMissingFileIsNeverCreated() throws {
    let folder = try TemporaryDirectory("read-only")
    let path = folder.path("nested/state.db")
    #expect {
      try PersistentStore(path: path, options: Self.readOnly)
    } throws: { error in
      guard case PersistentLiveDataError.cannotOpen(_, let code, let reason) = error else { return false }
      return code == ENOENT && reason.contains("readOnly")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.path("nested")), "not even its folder")
  }

  @Test @MainActor func everyWriteThrowsReadOnlyAndChangesNothing() async throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    let before = fileBytes(path)
    let store = try PersistentStore(path: path, options: Self.readOnly)
    let settings = try store.liveData("settings", default: Settings())
    #expect(settings.value == Settings(theme: "green") && settings.version == 3)
    #expect(try store.keys() == ["counter", "settings"])
    #expect(try settings.history().map(\.value.theme) == ["green", "blue", "dark"])
    #expect(try settings.value(at: 1) == Settings(theme: "dark"))

    let refused = PersistentLiveDataError.readOnly(path: path)
    #expect(throws: refused) { try settings.set(Settings(theme: "red")) }
    var transformRan = false
    #expect(throws: refused) {
      try settings.update {
        transformRan = true
        $0.theme = "red"
      }
    }
    #expect(!transformRan, "no user code runs for a refused write")
    #expect(throws: refused) { try settings.rollback(to: 1) }
    #expect(throws: refused) { try settings.reset() }
    #expect(throws: refused) { try store.transaction { transformRan = true } }
    #expect(!transformRan)
    #expect(throws: refused) { try store.removeKey("counter") }
    await #expect(throws: refused) { try await settings.write(Settings(theme: "red")) }
    let bodyRan = Locked(false)
    await #expect(throws: refused) { try await store.write { bodyRan.withLock { $0 = true } } }
    #expect(!bodyRan.withLock { $0 })
    #expect(throws: refused) { _ = try store.liveData("counter", default: 0, retention: .last(1)) }
    #expect(throws: refused) { _ = try store.prune(key: nil, keep: 1) }
    try store.flush()  // nothing of its own to make durable: not an error

    #expect(settings.value == Settings(theme: "green") && settings.version == 3)
    #expect(PersistentLiveDataError.readOnly(path: path).description.contains("StoreOptions.readOnly"))
    try store.close()
    #expect(fileBytes(path) == before, "the database file is byte for byte as it was")
  }

  @Test func aBackupOfAReadOnlyStoreWorks() throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    let store = try PersistentStore(path: path, options: Self.readOnly)
    try store.backup(to: folder.path("copy.db"))
    let copy = try PersistentStore(path: folder.path("copy.db"))
    #expect(try copy.liveData("settings", default: Settings()).version == 3)
  }

  @Test @MainActor func itSeesAnotherProcessesWrites() async throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    let store = try PersistentStore(path: path, options: Self.readOnly)
    let counter = try store.liveData("counter", default: 0)
    var heard: [Int] = []
    let observer = counter.observeForever(receiveCurrent: false) { heard.append($0) }
    defer { observer.cancel() }
    let writer = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
    writer.wait()
    #expect(writer.readAllLines() == ["ack 2"])
    #expect(await eventually(timeout: .seconds(30)) { heard == [42] })
    #expect(counter.value == 42 && counter.version == 2)
  }

  /// A read-only store claims nothing: it opens beside this process's writer and follows its commits.
  @Test @MainActor func aReadOnlyStoreBesideThisProcesssWriterFollowsIt() async throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    let writer = try PersistentStore(path: path)
    let reader = try PersistentStore(path: path, options: Self.readOnly)
    #expect(throws: PersistentLiveDataError.alreadyOpen(path: path)) { try PersistentStore(path: path) }
    let counter = try reader.liveData("counter", default: 0)
    try writer.liveData("counter", default: 0).set(7)
    #expect(await eventually(timeout: .seconds(30)) { counter.value == 7 })
    #expect(counter.version == 2)
    try reader.close()
    try writer.close()
  }

  @Test func anOlderSchemaIsNotMigrated() throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    try SQLiteCLI.execute(
      path,
      dropAttributionSQL + dropChangeLogSQL
        + "DROP TABLE pld_store_properties; DELETE FROM pld_migrations WHERE version >= 5; PRAGMA user_version = 4;"
    )
    let before = fileBytes(path)
    #expect(
      throws: PersistentLiveDataError.schemaTooOld(path: path, found: 4, required: Migrator.latestVersion)
    ) {
      try PersistentStore(path: path, options: Self.readOnly)
    }
    #expect(fileBytes(path) == before)
    #expect(
      PersistentLiveDataError.schemaTooOld(path: path, found: 4, required: Migrator.latestVersion).description
        .contains(
          "open it once without StoreOptions.readOnly"))
    _ = try PersistentStore(path: path)  // a writable open upgrades it; then read-only works
    #expect(try PersistentStore(path: path, options: Self.readOnly).keys() == ["counter", "settings"])
  }

  /// Root ignores permissions: `chattr +i` makes the folder (or the file) unwritable even for root.
  @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
  func aStoreInAnImmutableFolderOpensReadOnly() throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    try setImmutable(true, [folder.path])
    defer { try? setImmutable(false, [folder.path]) }
    let store = try PersistentStore(path: path, options: Self.readOnly)
    let settings = try store.liveData("settings", default: Settings())
    #expect(settings.value == Settings(theme: "green"))
    #expect(try settings.history().count == 3)
    #expect(throws: PersistentLiveDataError.readOnly(path: path)) { try settings.set(Settings()) }
    try store.close()
  }

  /// Read alone, the file would lack the commits in its -wal: refused rather than silently stale.
  @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
  func anImmutableFolderWithCommitsInTheWALIsRefusedNotReadStale() throws {
    let source = try TemporaryDirectory("read-only")
    let copy = try TemporaryDirectory("read-only")
    let store = try PersistentStore(path: source.path("state.db"))
    try store.liveData("counter", default: 0).set(1)
    // The files of a store that was not closed: its commit is in -wal only (no checkpoint yet).
    for suffix in ["", "-wal"] {
      try FileManager.default.copyItem(
        atPath: source.path("state.db") + suffix, toPath: copy.path("state.db") + suffix)
    }
    try store.close()
    let path = copy.path("state.db")
    #expect((try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0) > 32)
    try setImmutable(true, [copy.path])
    defer { try? setImmutable(false, [copy.path]) }
    #expect {
      try PersistentStore(path: path, options: Self.readOnly)
    } throws: { error in
      guard case PersistentLiveDataError.cannotOpen(_, _, let reason) = error else { return false }
      return reason.contains("-wal") && reason.contains("make the folder writable")
    }
  }

  @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
  func anUnwritableFileIsReportedAtOpenWithoutReadOnly() throws {
    let folder = try TemporaryDirectory("read-only")
    let path = try Self.makeStore(folder)
    try setImmutable(true, [path])
    defer { try? setImmutable(false, [path]) }
    #expect(throws: PersistentLiveDataError.readOnly(path: path)) { try PersistentStore(path: path) }
    let store = try PersistentStore(path: path, options: Self.readOnly)
    #expect(try store.liveData("counter", default: 0).value == 1)
  }
}
