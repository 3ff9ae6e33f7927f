import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// Another process (here the sqlite3 client, as pld-tool would) writes a version while the store is
  /// open: the store's next write follows it with the next version, never reusing or skipping one.
  @Suite(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
  struct ExternalWriterTests {
    /// Inserts `payload` as the next version of `key` from another process.
    func insertFromAnotherProcess(_ path: String, key: String, payload: String) throws {
      try SQLiteCLI.execute(
        path,
        """
        INSERT INTO pld_values (key, version, written_at, payload)
        SELECT '\(key)', coalesce(max(version), 0) + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), '\(payload)'
        FROM pld_values WHERE key = '\(key)';
        """)
    }

    @Test func setAfterAnotherProcessWroteUsesTheNextVersion() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      _ = try count.history()
      try insertFromAnotherProcess(path, key: "count", payload: "41")

      try count.set(100)
      #expect(count.version == 3, "version 2 was written by the other process")
      #expect(try count.history().map(\.version) == [3, 2, 1])
      #expect(try count.value(at: 2) == 41)
    }

    @Test func updateAfterAnotherProcessWroteStartsFromItsValue() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      try insertFromAnotherProcess(path, key: "count", payload: "41")

      let written = try count.update { $0 += 1 }
      #expect(written == 42, "update is a read-modify-write of the latest stored version")
      #expect(count.value == 42)
      #expect(count.version == 3)
    }

    @Test func historyShowsVersionsWrittenByAnotherProcess() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      _ = try count.value(at: 1)
      try insertFromAnotherProcess(path, key: "count", payload: "2")
      #expect(try count.history().map(\.version) == [2, 1])
      #expect(try count.value(at: 2) == 2)
      #expect(try store.keys() == ["count"])
    }
  }
}
