import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension MigrationTests {
  /// A migration that fails when a store opens is reported as `migrationFailed`, naming the file, the
  /// migration and the cause — never as a made-up SQLite code; what the environment refused keeps its
  /// own error.
  @Suite struct MigrationFailureTests {
    static let initial = MigrationCatalog.migrations[0]

    /// A file marked as ours at schema version 0 that already has a `pld_values` table of another
    /// shape (someone's hand-made file): migration 1 cannot create its table.
    @Test func failingMigrationNamesFileMigrationAndCause() throws {
      let folder = try TemporaryDirectory("migration")
      let path = folder.path("store.db")
      do {
        let connection = try SQLiteConnection(path: path, mode: .readWrite, create: true)
        defer { connection.close() }
        try connection.execute(
          """
          PRAGMA application_id = \(Migrator.applicationID);
          CREATE TABLE pld_values(anything TEXT); INSERT INTO pld_values VALUES ('kept');
          """)
      }
      let error = try #require(expectStoreError("migrationFailed") { try PersistentStore(path: path) })
      guard case .migrationFailed(let errorPath, let version, let name, let reason) = error else { return }
      #expect(errorPath == path)
      #expect(version == 1)
      #expect(name == Self.initial.name)
      #expect(reason.contains("pld_values already exists"), "\(reason)")
      let description = error.description
      #expect(description.hasPrefix("Migration 1 (\"\(Self.initial.name)\") of \"\(path)\" failed ("))
      #expect(description.contains("schema version 0"), "\(description)")

      // Rolled back: the file keeps its schema version and its row.
      let check = try SQLiteConnection(path: path, mode: .readOnly)
      defer { check.close() }
      #expect(try check.pragmaInt("user_version") == 0)
      #expect(try check.scalarText("SELECT anything FROM pld_values") == "kept")
    }

    @Test func migratorRefusalsKeepTheirMeaning() throws {
      let connection = try SQLiteConnection.inMemory()
      defer { connection.close() }
      func mapped(_ error: any Error) -> PersistentLiveDataError? {
        StoreOpener.migrationError(error, connection: connection, path: "app.db") as? PersistentLiveDataError
      }
      #expect(
        mapped(MigrationError.schemaTooNew(found: 9, supported: 1))
          == .schemaTooNew(path: "app.db", found: 9, supported: 1))
      #expect(mapped(MigrationError.foreignDatabase(applicationID: 7)) == .foreignDatabase(path: "app.db"))
      let list = MigrationError.invalidMigrationList(versions: [1, 3])
      #expect(
        mapped(list)
          == .migrationFailed(path: "app.db", version: 1, name: Self.initial.name, reason: list.description))
      // What the environment refused says so, with what to do about it.
      #expect(
        mapped(SQLiteError(extendedCode: SQLiteError.fullCode, message: "database or disk is full"))
          == .diskFull(path: "app.db"))
      #expect(
        mapped(SQLiteError(extendedCode: 1, message: "no such table: x"))
          == .migrationFailed(path: "app.db", version: 1, name: Self.initial.name, reason: "no such table: x")
      )
    }
  }
}
