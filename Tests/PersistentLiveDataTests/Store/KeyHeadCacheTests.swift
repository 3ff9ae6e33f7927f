import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// A write takes its key's newest version and recorded retention from memory when nothing but its own
  /// store changed the file since it last wrote the key (``KeyHeadCache``). Each test changes the file in
  /// a way the memory must not hide, then checks the next write: a stale head would reuse a version (the
  /// insert fails), skip one, land at or below a removal, or ignore a retention.
  @Suite struct KeyHeadCacheTests {
    struct Refused: Error {}

    /// The versions of `key` in the file, newest first.
    static func storedVersions(_ path: String, _ key: String) throws -> String {
      try SQLiteCLI.query(
        path,
        "SELECT group_concat(version, ' ') FROM (SELECT version FROM pld_values WHERE key = '\(key)' "
          + "ORDER BY version DESC)")
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func aRemovalByAnotherProcessIsSeenByTheNextWrite() throws {
      let folder = try TemporaryDirectory("heads")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      try count.set(2)
      // What a removal by pld-tool leaves: no rows, the version the removal took.
      try SQLiteCLI.execute(
        path,
        """
        DELETE FROM pld_values WHERE key = 'count';
        INSERT INTO pld_removed_keys (key, version, removed_at) VALUES ('count', 3, 0);
        """)

      try count.set(10)
      #expect(count.version == 4, "above the version the removal took")
      #expect(try Self.storedVersions(path, "count") == "4")
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func aRetentionRecordedByAnotherProcessIsAppliedByTheNextWrites() throws {
      let folder = try TemporaryDirectory("heads")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      for next in 1...10 { try count.set(next) }
      try SQLiteCLI.execute(path, "INSERT INTO pld_key_retention (key, keep) VALUES ('count', 2)")

      // Pruning runs in batches of 16: version 16 prunes down to the last two.
      for next in 11...16 { try count.set(next) }
      #expect(try Self.storedVersions(path, "count") == "16 15")
    }

    @Test func aRemovalInTheSameStoreIsSeenByTheNextWrite() throws {
      let folder = try TemporaryDirectory("heads")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      try store.removeKey("count")  // takes version 2
      try count.set(5)
      #expect(count.version == 3)

      try count.set(6)
      try store.removeKey("count")
      try store.transaction { try count.set(7) }
      #expect(count.version == 6, "4 written, 5 the removal's, 6 written after it")
    }

    @Test func aBodyThatWroteThenThrewLeavesTheNextWriteGapFree() async throws {
      let folder = try TemporaryDirectory("heads")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try await count.write(1)
      await #expect(throws: Refused.self) {
        try await store.write { () throws -> Void in
          try count.set(2)
          try count.set(3)
          throw Refused()
        }
      }
      try await count.write(4)
      #expect(count.version == 2, "the undone versions 2 and 3 are not skipped")
      try count.set(5)
      #expect(count.version == 3)
      #expect(try count.history().map(\.version) == [3, 2, 1], "the file holds no undone version")
    }

    /// The cache holds at most ``KeyHeadCache/capacity`` keys: a commit that would take it past that
    /// starts it over with that commit's heads, and a key it dropped is read from the file again.
    @Test func theCacheKeepsAtMostItsCapacityAndStartsOverPastIt() throws {
      let folder = try TemporaryDirectory("heads")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      try store.liveData("key-0-0", default: 0).set(41)
      try store.close()
      let connection = try SQLiteConnection(path: path)
      defer { connection.close() }
      var cache = KeyHeadCache()
      let perTransaction = 1_000
      var counts: [Int] = []
      for round in 0..<5 {
        try connection.execute("BEGIN IMMEDIATE")
        var transaction = TransactionHeads()
        for index in 0..<perTransaction {
          let head = try cache.head(of: "key-\(round)-\(index)", in: &transaction, connection: connection)
          #expect(head.latest == (round == 0 && index == 0 ? 1 : 0))
        }
        try connection.execute("COMMIT")
        cache.committed(transaction, connection: connection)
        counts.append(cache.count)
      }
      #expect(KeyHeadCache.capacity == 4_096)
      #expect(counts == [1_000, 2_000, 3_000, 4_000, 1_000], "the fifth commit would pass 4,096: start over")
      #expect(cache.cachedHead(of: "key-0-0") == nil && cache.cachedHead(of: "key-4-999") != nil)

      try connection.execute("BEGIN IMMEDIATE")
      var transaction = TransactionHeads()
      #expect(try cache.head(of: "key-0-0", in: &transaction, connection: connection).latest == 1)
      try connection.execute("COMMIT")
      cache.committed(transaction, connection: connection)
      #expect(cache.count == 1_001 && cache.cachedHead(of: "key-0-0")?.latest == 1)
    }

    @Test func aTransactionRolledBackLeavesTheNextWriteGapFree() throws {
      let folder = try TemporaryDirectory("heads")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      #expect(throws: Refused.self) {
        try store.transaction {
          try count.set(2)
          throw Refused()
        }
      }
      try count.set(3)
      #expect(count.version == 2)
      #expect(throws: Refused.self) {
        try store.transaction {
          try count.set(4)
          try count.set(5)
          throw Refused()
        }
      }
      try count.set(6)
      #expect(count.version == 3)
    }
  }
}
