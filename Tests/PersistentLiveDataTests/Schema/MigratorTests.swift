import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension MigrationTests {
  @Suite struct MigratorTests {
    static let initial = MigrationCatalog.migrations[0]

    /// Table names of the file, sorted.
    static func tables(_ connection: SQLiteConnection) throws -> [String] {
      let statement = try connection.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      var names: [String] = []
      while try statement.step() { names.append(statement.text(0)) }
      return names
    }

    /// (version, name) rows of pld_migrations in order.
    static func recorded(_ connection: SQLiteConnection) throws -> [String] {
      let statement = try connection.prepare(
        "SELECT version, name, applied_at FROM pld_migrations ORDER BY version")
      var rows: [String] = []
      while try statement.step() {
        #expect(statement.int64(2) > 1_600_000_000_000)  // milliseconds, not seconds
        rows.append("\(statement.int64(0)):\(statement.text(1))")
      }
      return rows
    }

    @Test func appliesTheCatalogAndRecordsIt() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        let migrator = Migrator()
        #expect(try migrator.schemaVersion(of: connection) == 0)
        #expect(try migrator.pendingMigrations(for: connection) == MigrationCatalog.migrations)
        let applied = try migrator.migrate(connection)
        #expect(applied == MigrationCatalog.migrations)
        #expect(
          try Self.tables(connection) == [
            "pld_change_log", "pld_change_log_readers", "pld_collection_log", "pld_collections",
            "pld_key_retention", "pld_migrations", "pld_removed_keys", "pld_store_properties", "pld_values",
          ])
        #expect(
          try Self.recorded(connection) == MigrationCatalog.migrations.map { "\($0.version):\($0.name)" })
        #expect(try connection.pragmaInt("user_version") == Int64(Migrator.latestVersion))
        #expect(try connection.pragmaInt("application_id") == Int64(Migrator.applicationID))
        #expect(try migrator.schemaVersion(of: connection) == Migrator.latestVersion)
        #expect(!connection.isInTransaction)
      }
    }

    @Test func appliesAListInOrderEachInItsOwnTransaction() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        // One more than the catalog has, listed out of order.
        let last = Migrator.latestVersion + 1
        let later = (3...last).reversed().map {
          Migration(version: $0, name: "step\($0)", sql: "INSERT INTO log VALUES ('\($0)');")
        }
        let migrations =
          later + [
            Self.initial,
            Migration(
              version: 2, name: "second", sql: "CREATE TABLE log(step TEXT); INSERT INTO log VALUES ('2');"),
          ]
        let applied = try Migrator(migrations: migrations).migrate(connection)
        #expect(applied.map(\.version) == Array(1...last))
        #expect(
          try connection.scalarText("SELECT group_concat(step, ',') FROM log")
            == (2...last).map(String.init).joined(separator: ","))
        #expect(
          try Self.recorded(connection)
            == ["1:initial_schema", "2:second"] + (3...last).map { "\($0):step\($0)" })
        #expect(try connection.pragmaInt("user_version") == Int64(last))
        // The catalog alone now finds the file too new.
        #expect(throws: MigrationError.schemaTooNew(found: last, supported: Migrator.latestVersion)) {
          try Migrator().migrate(connection)
        }
      }
    }

    @Test func isIdempotentOnReopen() throws {
      try TemporaryDirectory.with { directory in
        let first = try directory.openDatabase()
        try Migrator().migrate(first)
        first.close()
        let before = directory.contents(of: "test.db")
        let reopened = try directory.openDatabase()
        #expect(try Migrator().migrate(reopened) == [])
        #expect(reopened.totalChanges == 0)
        #expect(try Self.recorded(reopened).count == MigrationCatalog.migrations.count)
        reopened.close()
        #expect(directory.contents(of: "test.db") == before)
      }
    }

    @Test func refusesANewerSchemaWithoutChangingTheFile() throws {
      try TemporaryDirectory.with { directory in
        let writer = try directory.openDatabase()
        try Migrator().migrate(writer)
        try writer.setPragma("user_version", Int64(Migrator.latestVersion + 1))
        writer.close()
        let before = try #require(directory.contents(of: "test.db"))

        let connection = try directory.openDatabase()
        let expected = MigrationError.schemaTooNew(
          found: Migrator.latestVersion + 1, supported: Migrator.latestVersion)
        #expect(throws: expected) { try Migrator().migrate(connection) }
        #expect(throws: expected) { try Migrator().pendingMigrations(for: connection) }
        #expect(try Migrator().schemaVersion(of: connection) == Migrator.latestVersion + 1)
        connection.close()
        #expect(directory.contents(of: "test.db") == before)
        #expect(directory.contents(of: "test.db-journal") == nil)
      }
    }

    @Test func newerVersionRecordedOnlyInTheTableIsAlsoRefused() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try Migrator().migrate(connection)
        try connection.run("INSERT INTO pld_migrations (version, name, applied_at) VALUES (99, 'future', 0)")
        #expect(throws: MigrationError.schemaTooNew(found: 99, supported: Migrator.latestVersion)) {
          try Migrator().migrate(connection)
        }
      }
    }

    @Test func failingMigrationRollsBackCompletely() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        let bogus = Migration(
          version: 2, name: "bogus",
          sql: """
            CREATE TABLE half_done(x);
            INSERT INTO pld_values(key, version, written_at, payload) VALUES ('k', 1, 0, '1');
            INSERT INTO no_such_table VALUES (1);
            """)
        let error = sqliteError { try Migrator(migrations: [Self.initial, bogus]).migrate(connection) }
        #expect(error?.message == "no such table: no_such_table")
        #expect(!connection.isInTransaction)
        #expect(try Self.tables(connection) == ["pld_migrations", "pld_values"])
        #expect(try connection.scalarInt64("SELECT count(*) FROM pld_values") == 0)
        #expect(try Self.recorded(connection) == ["1:initial_schema"])
        #expect(try connection.pragmaInt("user_version") == 1)
        // Fixing the cause lets the next run continue from version 1.
        let fixed = Migration(version: 2, name: "fixed", sql: "CREATE TABLE done(x);")
        #expect(try Migrator(migrations: [Self.initial, fixed]).migrate(connection).map(\.version) == [2])
      }
    }

    @Test func failingFirstMigrationLeavesAnEmptyFile() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        let bogus = Migration(version: 1, name: "bogus", sql: "CREATE TABLE a(x); CREATE TABLE a(x);")
        #expect(
          sqliteError { try Migrator(migrations: [bogus]).migrate(connection) }?.code == SQLiteCode.error)
        #expect(try Self.tables(connection) == [])
        #expect(try connection.pragmaInt("user_version") == 0)
        #expect(try connection.pragmaInt("application_id") == 0)
      }
    }

    @Test func refusesForeignDatabases() throws {
      try TemporaryDirectory.with { directory in
        let other = try directory.openDatabase("other.db")
        try other.setPragma("application_id", 0x1234_5678)
        #expect(throws: MigrationError.foreignDatabase(applicationID: 0x1234_5678)) {
          try Migrator().migrate(other)
        }

        let unmarked = try directory.openDatabase("unmarked.db")
        try unmarked.execute("CREATE TABLE contacts(name TEXT)")
        #expect(throws: MigrationError.foreignDatabase(applicationID: 0)) { try Migrator().migrate(unmarked) }
        #expect(try Self.tables(unmarked) == ["contacts"])
      }
    }

    @Test func refusesAListWithGaps() throws {
      let connection = try SQLiteConnection.inMemory()
      let list = [Self.initial, Migration(version: 3, name: "gap", sql: "")]
      #expect(throws: MigrationError.invalidMigrationList(versions: [1, 3])) {
        try Migrator(migrations: list).migrate(connection)
      }
    }

    @Test func readOnlyConnectionCanCheckButNotMigrate() throws {
      try TemporaryDirectory.with { directory in
        _ = try directory.openDatabase()
        let reader = try SQLiteConnection(path: directory.path("test.db"), mode: .readOnly)
        #expect(try Migrator().pendingMigrations(for: reader).count == Migrator.latestVersion)
        #expect(sqliteError { try Migrator().migrate(reader) }?.isReadOnly == true)
      }
    }

    @Test func errorDescriptionsNameTheVersions() {
      #expect(MigrationError.schemaTooNew(found: 5, supported: 1).description.contains("schema version 5"))
      #expect(MigrationError.foreignDatabase(applicationID: 7).description.contains("application_id 7"))
    }
  }
}
