import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// Another connection's commit costs what it changed: the store reads the keys the change log names,
/// not every live key, and nothing is missed when the log cannot tell.
@Suite(.timeLimit(deadlockTimeLimit)) struct ChangeLogTests {
  private static let liveKeyCount = 2_000

  /// Runs pld-tool and waits for it on a thread of its own (under a sanitizer it takes seconds to start:
  /// a wait on the cooperative pool would hold one of its two threads meanwhile).
  private func tool(_ arguments: String...) async throws {
    let child = try ChildProcess(
      ChildProcess.product("pld-tool"), arguments,
      mergingStandardError: true)
    let (lines, _) = await child.finish(within: .seconds(300))
    #expect(child.exitCode == 0, "pld-tool \(arguments): \(lines)")
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

    /// The keys this store's checks read while `body` ran (pld-tool's own registration and its removal
    /// are commits too: their checks read nothing).
    func keysRead(_ body: () async throws -> Void) async rethrows -> Int {
      let before = store.externalCheckStatistics.keysRead
      try await body()
      return store.externalCheckStatistics.keysRead - before
    }

    let first = try await keysRead {
      try await tool("set", path, "k7", "70")
      #expect(await eventually { keys[7].version == 1 }, "another process's version arrived")
    }
    #expect(keys[7].value == 70)
    #expect(first == 1, "\(store.externalCheckStatistics)")

    // This process's own writes, made while no other process reads the log, are not in it.
    for value in 1...50 { try keys[9].set(value) }
    let second = try await keysRead {
      try await tool("set", path, "k10", "100")
      #expect(await eventually { keys[10].version == 1 })
    }
    #expect(second == 1, "\(store.externalCheckStatistics)")

    // A removal by another process is in the log as well.
    let third = try await keysRead {
      try await tool("delete", path, "k7")
      #expect(await eventually { keys[7].version == 2 }, "the removal arrived")
    }
    #expect(keys[7].value == 0)
    #expect(third == 1)

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
      dropAttributionSQL + dropChangeLogSQL
        + "DELETE FROM pld_migrations WHERE version = 6; PRAGMA user_version = 5;")
    let store = try PersistentStore(path: path)
    #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "\(Migrator.latestVersion)", "migrated")
    let a = try store.liveData("a", default: 0)
    let b = try store.liveData("b", default: 0)
    #expect(a.value == 1)
    let before = store.externalCheckStatistics.keysRead
    try await tool("set", path, "b", "2")
    #expect(await eventually { b.version == 1 } && b.value == 2)
    #expect(store.externalCheckStatistics.keysRead - before == 1, "b alone, from the log")
    try store.close()
  }

  @Test func everyVersionStillReachesChangesSinceWithManyLiveKeys() async throws {
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("every.db")
    let (store, keys) = try storeWithManyLiveKeys(path)
    try keys[0].set(1)
    let stream = keys[2].changes(since: 0)
    for value in 1...5 { try await tool("set", path, "k2", "\(value)") }
    var seen: [Int64] = []
    for try await change in stream {
      seen.append(change.version)
      #expect(change.value == Int(change.version))
      if seen.count == 5 { break }
    }
    #expect(seen == [1, 2, 3, 4, 5])
    try store.close()
  }

  @Test func aFileOneProcessUsesAloneLogsNothingAndAReaderIsLoggedForWhileOpen() async throws {
    try #require(SQLiteCLI.isAvailable, "the sqlite3 shell reads the log")
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("alone.db")
    func count(_ table: String) throws -> String {
      try SQLiteCLI.query(path, "SELECT count(*) FROM \(table)")
    }
    do {
      let store = try PersistentStore(path: path)
      let a = try store.liveData("a", default: 0)
      for value in 1...20 { try a.set(value) }
      try await a.write(21)
      try store.removeKey("a")
      #expect(try count("pld_change_log_readers") == "1", "the store is a reader while it is open")
      #expect(try count("pld_change_log") == "0", "nobody else reads: its own writes log nothing")
      // Another writer logs for it: the sqlite3 shell, and pld-tool (itself a reader while it runs).
      try SQLiteCLI.execute(
        path, "INSERT INTO pld_values (key, version, written_at, payload) VALUES ('b', 1, 0, '1')")
      try await tool("set", path, "c", "1")
      #expect(try SQLiteCLI.query(path, "SELECT key FROM pld_change_log ORDER BY seq") == "b\nc")
      try store.close()
    }
    #expect(try count("pld_change_log_readers") == "0", "closing deletes the registration")

    // A store that does not watch (no polling, no file watch) does not register; one that is read-only
    // cannot, and reads every live key at each check instead.
    var quiet = StoreOptions()
    quiet.externalChangePollInterval = nil
    let writer = try PersistentStore(path: path, options: quiet)
    #expect(try count("pld_change_log_readers") == "0")
    try writer.liveData("d", default: 0).set(1)
    try writer.close()
  }

  @Test func aReaderWhoseProcessIsGoneIsDeletedByTheNextStore() throws {
    try #require(SQLiteCLI.isAvailable, "the sqlite3 shell leaves the stale registration")
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("stale.db")
    try PersistentStore(path: path).close()
    // A process killed while its store was open leaves its row; 2^31 - 2 is no process's id here.
    try SQLiteCLI.execute(
      path, "INSERT INTO pld_change_log_readers (id, pid, started_at) VALUES (42, 2147483646, 0)")
    let store = try PersistentStore(path: path)
    #expect(
      try SQLiteCLI.query(path, "SELECT count(*) FROM pld_change_log_readers WHERE id = 42") == "0",
      "the stale registration is gone")
    #expect(try SQLiteCLI.query(path, "SELECT pid FROM pld_change_log_readers") == "\(getpid())")
    try store.liveData("a", default: 0).set(1)
    #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_change_log") == "0")
    try store.close()
  }

  @Test func openingAndClosingAStoreLeavesTheFileAsItWas() throws {
    let folder = try TemporaryDirectory("changelog")
    let path = folder.path("bytes.db")
    do {
      let store = try PersistentStore(path: path)
      try store.liveData("a", default: 0).set(1)
      try store.close()
    }
    let before = fileBytes(path)
    // Each open registers as a reader and each close removes it: the row leaves no trace, whatever
    // its random id (one in 128 ids was a byte shorter, and its removal left another page).
    for round in 1...300 {
      var options = StoreOptions()
      options.secureDelete = false  // the store's own setting: the registration zeroes what it deletes
      let store = try PersistentStore(path: path, options: options)
      _ = try store.liveData("a", default: 0)
      try store.close()
      #expect(fileBytes(path) == before, "round \(round)")
      if fileBytes(path) != before { break }
    }
  }
}
