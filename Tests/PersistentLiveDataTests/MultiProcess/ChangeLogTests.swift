import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// Another connection's commit costs what it changed: the store reads the keys the change log names,
/// not every live key, and nothing is missed when the log cannot tell.
@Suite(.timeLimit(deadlockTimeLimit)) struct ChangeLogTests {
  private static let liveKeyCount = 2_000

  private func tool(_ arguments: String...) throws {
    let child = try ChildProcess(
      ChildProcess.productsFolder.appendingPathComponent("pld-tool").path, arguments,
      mergingStandardError: true)
    child.wait()
    #expect(child.exitCode == 0, "pld-tool \(arguments): \(child.readAllLines())")
  }

  /// A store holding `liveKeyCount` live keys `k0`, `k1`, ….
  private func storeWithManyLiveKeys(
    _ path: String
  ) throws -> (store: PersistentStore, keys: [PersistentLiveData<Int>]) {
    let store = try PersistentStore(path: path)
    let keys = try (0..<Self.liveKeyCount).map { try store.liveData("k\($0)", default: 0) }
    return (store, keys)
  }

  @Test func anotherProcessesCommitReadsOnlyTheKeysItChanged() async throws {
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("many.db")
    let (store, keys) = try storeWithManyLiveKeys(path)
    try keys[1].set(1)  // the file and its log exist before the other process writes

    try tool("set", path, "k7", "70")
    #expect(await eventually { keys[7].version == 1 }, "another process's version arrived")
    #expect(keys[7].value == 70)
    // k7, and k1, which this process wrote since the store last looked.
    #expect(store.externalCheckStatistics.lastKeysRead <= 2, "\(store.externalCheckStatistics)")

    // This process's own writes since the last check are in the log too: read once each, deduplicated.
    for value in 1...50 { try keys[9].set(value) }
    try tool("set", path, "k10", "100")
    #expect(await eventually { keys[10].version == 1 })
    #expect(store.externalCheckStatistics.lastKeysRead <= 2, "\(store.externalCheckStatistics)")

    // A removal by another process is in the log as well.
    try tool("delete", path, "k7")
    #expect(await eventually { keys[7].version == 2 }, "the removal arrived")
    #expect(keys[7].value == 0)
    #expect(store.externalCheckStatistics.lastKeysRead == 1)

    // Over all the checks, the keys read follow what changed, never the 2,000 live keys.
    let statistics = store.externalCheckStatistics
    #expect(statistics.keysRead <= 2 * statistics.checks, "\(statistics)")
    try store.close()
  }

  @Test func aLogTrimmedPastThePositionFallsBackToReadingEveryLiveKey() async throws {
    try #require(SQLiteCLI.isAvailable, "the sqlite3 shell is the other writer")
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("trimmed.db")
    let (store, keys) = try storeWithManyLiveKeys(path)
    try keys[0].set(1)
    // Another writer commits a version of k3, then 10,000 versions of another key, then trims the log
    // as a store does (keeping the newest 8,192 rows): k3's row is gone before this store looks.
    try SQLiteCLI.execute(
      path,
      """
      BEGIN IMMEDIATE;
      INSERT INTO pld_values (key, version, written_at, payload) VALUES ('k3', 1, 0, '33');
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
      INSERT INTO pld_values (key, version, written_at, payload) SELECT 'bulk', i, 0, i FROM n;
      DELETE FROM pld_change_log WHERE seq <= (SELECT max(seq) FROM pld_change_log) - 8192;
      COMMIT;
      """)
    #expect(await eventually { keys[3].version == 1 }, "the version whose log row was trimmed arrived")
    #expect(keys[3].value == 33)
    #expect(store.externalCheckStatistics.lastKeysRead == Self.liveKeyCount, "read every live key once")

    // After that, the log is followed again from its newest row.
    try SQLiteCLI.execute(
      path, "INSERT INTO pld_values (key, version, written_at, payload) VALUES ('k4', 1, 0, '44')")
    #expect(await eventually { keys[4].version == 1 }, "a write by the sqlite3 shell is in the log")
    #expect(keys[4].value == 44)
    #expect(store.externalCheckStatistics.lastKeysRead == 1)

    // A log emptied and started over (numbers going back) is not trusted either.
    try SQLiteCLI.execute(
      path,
      """
      BEGIN IMMEDIATE;
      DELETE FROM pld_change_log;
      INSERT INTO pld_values (key, version, written_at, payload) VALUES ('k5', 1, 0, '55');
      COMMIT;
      """)
    #expect(await eventually { keys[5].version == 1 })
    #expect(store.externalCheckStatistics.lastKeysRead == Self.liveKeyCount)
    try store.close()
  }

  @Test func aFileWithoutTheLogIsMigratedAndThenFollowsIt() async throws {
    try #require(SQLiteCLI.isAvailable, "the sqlite3 shell turns the file back into schema version 5")
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("old.db")
    do {
      let store = try PersistentStore(path: path)
      try store.liveData("a", default: 0).set(1)
      try store.close()
    }
    // The file as the previous schema left it.
    try SQLiteCLI.execute(
      path,
      dropChangeLogSQL + "DELETE FROM pld_migrations WHERE version = 6; PRAGMA user_version = 5;")
    let store = try PersistentStore(path: path)
    #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "6", "migrated")
    let a = try store.liveData("a", default: 0)
    let b = try store.liveData("b", default: 0)
    #expect(a.value == 1)
    try tool("set", path, "b", "2")
    #expect(await eventually { b.version == 1 } && b.value == 2)
    #expect(store.externalCheckStatistics.lastKeysRead == 1)
    try store.close()
  }

  @Test func everyVersionStillReachesChangesSinceWithManyLiveKeys() async throws {
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("every.db")
    let (store, keys) = try storeWithManyLiveKeys(path)
    try keys[0].set(1)
    let stream = keys[2].changes(since: 0)
    for value in 1...5 { try tool("set", path, "k2", "\(value)") }
    var seen: [Int64] = []
    for try await change in stream {
      seen.append(change.version)
      #expect(change.value == Int(change.version))
      if seen.count == 5 { break }
    }
    #expect(seen == [1, 2, 3, 4, 5])
    try store.close()
  }
}
