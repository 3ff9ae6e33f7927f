import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  /// The validator's own answers, below the store and the inspector (the corpus in
  /// Reliability/StoreFileVerdictTests runs both over every damaged file).
  @Suite struct StoreFileValidatorTests {
    @Test func fileVerdicts() throws {
      let folder = try TemporaryDirectory("validator")
      let missing = folder.path("missing.db")
      #expect(try StoreFileValidator.checkFile(at: missing, access: .readOnly) == .missing)
      let empty = folder.path("empty.db")
      try writeFile(empty, Data())
      #expect(try StoreFileValidator.checkFile(at: empty, access: .readWrite) == .empty)
      #expect(throws: PersistentLiveDataError.isADirectory(path: folder.path)) {
        try StoreFileValidator.checkFile(at: folder.path, access: .readOnly)
      }
      // A companion link is refused even before the file exists: SQLite would open it.
      try FileManager.default.createSymbolicLink(atPath: missing + "-shm", withDestinationPath: empty)
      #expect(throws: PersistentLiveDataError.symbolicLink(path: missing + "-shm")) {
        try StoreFileValidator.checkFile(at: missing, access: .readWrite)
      }
    }

    /// A file cut short with a `-wal` next to it: accepted for a connection that reads the WAL, but only
    /// with `quick_check`; refused as truncated for an immutable read, which ignores the WAL.
    @Test func truncatedFileWithAWALDependsOnWhetherTheWALIsRead() throws {
      let folder = try TemporaryDirectory("validator")
      let path = folder.path("store.db")
      try Reliability.Timed.DamagedFileTests.writeStore(at: path)
      try truncateFile(path, to: try #require(fileBytes(path)).count / 2)
      #expect(throws: PersistentLiveDataError.self) {
        try StoreFileValidator.checkFile(at: path, access: .readOnly)
      }
      try writeFile(path + "-wal", Data(repeating: 1, count: 64))
      let verdict = try StoreFileValidator.checkFile(at: path, access: .readOnly)
      #expect(verdict.needsIntegrityCheck)
      #expect(try StoreFileValidator.checkFile(at: path, access: .readWrite) == verdict)
      let error = expectStoreError("corrupt") {
        try StoreFileValidator.checkFile(at: path, access: .immutable)
      }
      #expect(error?.description.contains("-wal") == true, "\(String(describing: error))")
    }

    /// The migrator and the validator share one definition of an empty, foreign or too new database.
    @Test func identities() throws {
      let connection = try SQLiteConnection.inMemory()
      defer { connection.close() }
      let supported = Migrator.latestVersion
      #expect(try StoreFileValidator.identify(connection, supportedVersion: supported) == .empty)
      try connection.execute("CREATE VIEW v AS SELECT 1")
      #expect(
        try StoreFileValidator.identify(connection, supportedVersion: supported) == .foreign(applicationID: 0)
      )
      #expect(throws: MigrationError.foreignDatabase(applicationID: 0)) { try Migrator().migrate(connection) }
      try connection.execute("DROP VIEW v")
      try connection.setPragma("user_version", 1)
      #expect(
        try StoreFileValidator.identify(connection, supportedVersion: supported) == .foreign(applicationID: 0)
      )
      try connection.setPragma("user_version", 0)
      try Migrator().migrate(connection)
      #expect(
        try StoreFileValidator.identify(connection, supportedVersion: supported)
          == .store(schemaVersion: supported))
      try connection.setPragma("user_version", Int64(supported + 1))
      #expect(
        try StoreFileValidator.identify(connection, supportedVersion: supported)
          == .tooNew(found: supported + 1, supported: supported))
    }
  }
}
