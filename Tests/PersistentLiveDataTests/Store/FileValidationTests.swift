import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// Opening validates the file first: what is not a PersistentLiveData store is refused with a distinct
  /// error and left byte for byte as it was.
  @Suite(.ownThread) struct FileValidationTests {
    /// Opens `path`, expects the error case `name`, and checks that the file is unchanged.
    func expectRefused(
      _ path: String, with name: String, verifyingIntegrity: Bool = false,
      sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
      let before = try #require(fileBytes(path), sourceLocation: sourceLocation)
      var options = StoreOptions()
      options.verifiesIntegrityOnOpen = verifyingIntegrity
      let error = expectStoreError(name, sourceLocation: sourceLocation) {
        try PersistentStore(path: path, options: options)
      }
      if let error {
        #expect(
          error.description.contains((path as NSString).lastPathComponent),
          "the error names the file: \(error)",
          sourceLocation: sourceLocation)
      }
      #expect(fileBytes(path) == before, "the refused file was modified", sourceLocation: sourceLocation)
      // Refusing again is just as harmless: nothing was left half-open.
      expectStoreError(name, sourceLocation: sourceLocation) {
        try PersistentStore(path: path, options: options)
      }
      #expect(fileBytes(path) == before, sourceLocation: sourceLocation)
    }

    /// A real store with many rows (about 100 pages), closed.
    func writeLargeStore(at path: String) throws {
      let store = try PersistentStore(path: path)
      let values = try (0..<20).map { try store.liveData("key-\($0)", default: "") }
      try store.transaction {
        for round in 0..<100 {
          for (index, value) in values.enumerated() {
            try value.set("round \(round) key \(index) " + String(repeating: "•", count: 60))
          }
        }
      }
      try store.close()
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func refusedFileIsNotKeptClaimedByTheProcess() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      let schemaVersion = try SQLiteCLI.query(path, "PRAGMA user_version")
      try SQLiteCLI.execute(path, "PRAGMA user_version = 9999;")
      expectStoreError("schemaTooNew") { try PersistentStore(path: path) }
      try SQLiteCLI.execute(path, "PRAGMA user_version = \(schemaVersion);")
      let store = try PersistentStore(path: path)
      let value = try store.liveData("value", default: 0)
      #expect(value.version == 1)
      try value.set(2)
      #expect(value.version == 2)
    }

    @Test func textFileIsNotADatabase() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("notes.txt")
      try writeFile(path, Data("Shopping list:\n- milk\n- bread\n".utf8))
      try expectRefused(path, with: "notADatabase")
    }

    @Test func randomBytesAreNotADatabase() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("random.bin")
      try writeFile(path, pseudoRandomBytes(count: 16_384))
      try expectRefused(path, with: "notADatabase")
    }

    @Test func shortFileIsNotADatabase() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("short.bin")
      try writeFile(path, Data("SQLite".utf8))
      try expectRefused(path, with: "notADatabase")
    }

    /// A directory where the file should be has its own error, which says what to do; nothing is
    /// created in it.
    @Test func directoryIsNamedAsADirectory() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("state.db")
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      let error = expectStoreError("isADirectory") { try PersistentStore(path: path) }
      #expect(error == .isADirectory(path: path))
      #expect(
        error?.description
          == "\"\(path)\" is a directory, not a database file; give the path of a file, such as one inside it, or move the directory away."
      )
      #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
      #expect(!fileExists(path + "-wal"))
      // The same through a trailing slash.
      expectStoreError("isADirectory") { try PersistentStore(path: path + "/") }
    }

    @Test func emptyFileBecomesAStore() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try writeFile(path, Data())
      do {
        let store = try PersistentStore(path: path)
        let value = try store.liveData("value", default: 0)
        #expect(value.version == 0)
        try value.set(42)
        try store.close()
      }
      let store = try PersistentStore(path: path)
      let value = try store.liveData("value", default: 0)
      #expect(value.value == 42)
      #expect(value.version == 1)
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func anotherApplicationsDatabaseIsForeign() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("other.db")
      try SQLiteCLI.execute(
        path,
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hello');")
      try expectRefused(path, with: "foreignDatabase")
      #expect(try SQLiteCLI.query(path, "SELECT body FROM notes") == "hello")
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func databaseWithOurTableNameButNoApplicationIDIsForeign() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("lookalike.db")
      try SQLiteCLI.execute(
        path,
        "CREATE TABLE pld_values(key TEXT, version INTEGER, written_at INTEGER, payload TEXT); INSERT INTO pld_values VALUES ('k', 1, 0, '1');"
      )
      try expectRefused(path, with: "foreignDatabase")
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func emptyDatabaseOfAnotherApplicationIsForeign() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("marked.db")
      try SQLiteCLI.execute(path, "PRAGMA application_id = 1234567; CREATE TABLE t(x); DROP TABLE t;")
      try expectRefused(path, with: "foreignDatabase")
    }

    @Test func truncatedStoreIsCorrupt() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try writeLargeStore(at: path)
      let size = try #require(fileBytes(path)).count
      #expect(size > 64 * 1024, "the store should span many pages (\(size) bytes)")
      try truncateFile(path, to: size / 2)
      try expectRefused(path, with: "corrupt")
    }

    @Test func storeWithADamagedPageIsCorrupt() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try writeLargeStore(at: path)
      let bytes = try #require(fileBytes(path))
      // The page size is the big-endian 16-bit value at offset 16 (1 means 65536).
      let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
      let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
      let pageCount = bytes.count / pageSize
      #expect(pageCount > 10)
      try overwriteBytes(path, at: (pageCount / 2) * pageSize, count: pageSize)
      try expectRefused(path, with: "corrupt", verifyingIntegrity: true)
    }

    @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
    func storeOfANewerSchemaIsRefused() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      try SQLiteCLI.execute(path, "PRAGMA user_version = 9999;")
      let before = try #require(fileBytes(path))
      let error = expectStoreError("schemaTooNew") { try PersistentStore(path: path) }
      if let error {
        #expect(error.description.contains("9999"), "the error names the schema found: \(error)")
      }
      #expect(fileBytes(path) == before)
      #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "9999", "never migrated down")
    }
  }
}
