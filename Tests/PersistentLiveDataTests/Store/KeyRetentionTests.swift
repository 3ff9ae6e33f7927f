import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// Per-key retention (`liveData(_:default:retention:)`): recorded by the file, so it outlives the
/// instance, the process and the store option of whoever writes the key.
@Suite struct KeyRetentionTests {
  /// Rows of `key` on disk, pruned or not yet (pruning runs in batches).
  static func rowsOnDisk(_ path: String, _ key: String) throws -> Int {
    Int(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values WHERE key = '\(key)'")) ?? -1
  }

  @Test func aKeyThatKeepsEverythingAndAHeartbeatShareOneStore() throws {
    let folder = try TemporaryDirectory("retention")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(5)))
    let heartbeat = try store.liveData("heartbeat", default: 0)
    let flags = try store.liveData("flags", default: 0, retention: .all)
    for value in 1...600 {
      try heartbeat.set(value)
      try flags.set(value)
    }
    #expect(try heartbeat.history().map(\.version) == [600, 599, 598, 597, 596])
    #expect(try flags.history().count == 600, "the key's retention overrides the store's option")
    #expect(try flags.value(at: 1) == 1)
    try store.close()
    #expect(try Self.rowsOnDisk(path, "flags") == 600)
    #expect(try Self.rowsOnDisk(path, "heartbeat") <= 5 + 16, "the heartbeat's old rows are deleted")
    let reopened = try PersistentStore(path: path)
    #expect(try reopened.recordedRetention(of: "heartbeat") == nil, "the store's option is not recorded")
    #expect(try reopened.recordedRetention(of: "flags") == .all)
  }

  @Test func theFileRemembersItAfterARestartAndForAnInstanceAskedWithoutIt() throws {
    let folder = try TemporaryDirectory("retention")
    let path = folder.path("state.db")
    do {
      let store = try PersistentStore(path: path)
      let flags = try store.liveData("flags", default: 0, retention: .last(50))
      for value in 1...10 { try flags.set(value) }
      #expect(try store.recordedRetention(of: "flags") == .last(50))
      #expect(try store.recordedRetention(of: "other") == nil)
      try store.close()
    }
    // A later run with a store option of 2 and no retention asked: the recorded 50 still applies.
    let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(2)))
    let flags = try store.liveData("flags", default: 0)
    for value in 11...300 { try flags.set(value) }
    #expect(try flags.history().count == 50)
    #expect(try flags.history().last?.version == 251)
    #expect(try Self.rowsOnDisk(path, "flags") < 50 + 128)
    #expect(try store.recordedRetention(of: "flags") == .last(50))
  }

  @Test func anotherProcessWithItsOwnRetentionOptionHonoursTheRecordedOne() throws {
    let folder = try TemporaryDirectory("retention")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let flags = try store.liveData("flags", default: 0, retention: .all)
    try flags.set(0)
    // The child writes 400 versions with a store option of .last(2); the key keeps every one.
    let child = try ChildProcess(ChildProcess.testChildPath, ["set-retained", path, "flags", "400", "2"])
    child.wait()
    #expect(child.readAllLines() == ["ack 401 history 401"])
    #expect(try flags.history().count == 401)
    #expect(try Self.rowsOnDisk(path, "flags") == 401)
    // A key without a recorded retention follows the child's option.
    let other = try ChildProcess(ChildProcess.testChildPath, ["set-retained", path, "other", "400", "2"])
    other.wait()
    #expect(other.readAllLines() == ["ack 400 history 2"])
  }

  @Test func askingForANewRetentionRecordsItAndHidesWhatItNoLongerKeepsAtOnce() throws {
    let folder = try TemporaryDirectory("retention")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(1)))
    let log = try store.liveData("log", default: "", retention: .all)
    for entry in ["a", "b", "c", "d", "e"] { try log.set(entry) }
    #expect(try log.history().count == 5)
    // The same instance is returned, and the new retention is recorded before anything is read.
    let again = try store.liveData("log", default: "", retention: .last(2))
    #expect(again === log)
    #expect(try store.recordedRetention(of: "log") == .last(2))
    #expect(try log.history().map(\.value) == ["e", "d"])
    #expect(try log.value(at: 1) == nil, "below the new retention: no longer visible")
    #expect(throws: PersistentLiveDataError.unknownVersion(key: "log", version: 2)) {
      try log.rollback(to: 2)
    }
    // Back to .all: a retention recorded as .all overrides the store's .last(1).
    _ = try store.liveData("log", default: "", retention: .all)
    #expect(try store.recordedRetention(of: "log") == .all)
    try log.set("f")
    #expect(try log.history().count >= 2, "nothing is pruned under .all")
  }

  @Test func aRemovedKeyKeepsItsRecordedRetentionForWhenItIsWrittenAgain() throws {
    let store = try PersistentStore.inMemory(options: StoreOptions(retention: .last(1)))
    let log = try store.liveData("log", default: 0, retention: .last(3))
    for value in 1...4 { try log.set(value) }
    try store.removeKey("log")
    #expect(try store.recordedRetention(of: "log") == .last(3))
    for value in 1...5 { try log.set(value) }
    #expect(try log.history().map(\.version) == [10, 9, 8])
  }

  @Test func recordingInsideATransactionCommitsWithIt() throws {
    let store = try PersistentStore.inMemory()
    let other = try store.liveData("other", default: 0)
    try store.transaction {
      try other.set(1)
      _ = try store.liveData("flags", default: 0, retention: .last(7))
    }
    #expect(try store.recordedRetention(of: "flags") == .last(7))
    #expect(throws: PersistentLiveDataError.self) {
      try store.transaction {
        _ = try store.liveData("rolled-back", default: 0, retention: .last(9))
        throw PersistentLiveDataError.storeClosed(path: "abort")
      }
    }
    #expect(
      try store.recordedRetention(of: "rolled-back") == nil, "a rolled-back transaction records nothing")
  }

  @Test func aStoreFromSchemaVersion3GainsTheTableWhenOpened() throws {
    let folder = try TemporaryDirectory("retention")
    let path = folder.path("state.db")
    do {
      let store = try PersistentStore(path: path)
      try store.liveData("k", default: 0).set(1)
      try store.close()
    }
    // Back to schema 3, as a store written by the previous release.
    try SQLiteCLI.execute(
      path,
      dropAttributionSQL + dropChangeLogSQL
        + "DROP TABLE pld_key_retention; DROP TABLE pld_store_properties; "
        + "DELETE FROM pld_migrations WHERE version >= 4; PRAGMA user_version = 3;")
    let store = try PersistentStore(path: path)
    #expect(try store.recordedRetention(of: "k") == nil)
    let k = try store.liveData("k", default: 0, retention: .last(4))
    #expect(k.value == 1)
    #expect(try store.recordedRetention(of: "k") == .last(4))
    try store.close()
    #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "\(Migrator.latestVersion)")
  }
}
