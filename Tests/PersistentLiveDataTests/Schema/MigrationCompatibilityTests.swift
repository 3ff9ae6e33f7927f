import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension MigrationTests {
  /// The compatibility promise (README): each migration records what a library that does not know it may do
  /// with the file, and a library meeting migrations past what it knows opens the file read-write, read-only
  /// or not at all by the worst of their marks — never resetting it, the file byte for byte unchanged when
  /// refused.
  @Suite struct MigrationCompatibilityTests {
    /// The marks of `pld_migrations`, "version:mark" in order.
    static func marks(_ path: String) throws -> [String] {
      let connection = try SQLiteConnection(path: path, mode: .readOnly)
      defer { connection.close() }
      let statement = try connection.prepare(
        "SELECT version, compatibility FROM pld_migrations ORDER BY version")
      var rows: [String] = []
      while try statement.step() { rows.append("\(statement.int64(0)):\(statement.text(1))") }
      return rows
    }

    /// A store at `path` with `counter` at version 1, closed.
    static func makeStore(_ path: String) throws {
      let store = try PersistentStore(path: path)
      try store.liveData("counter", default: 0).set(1)
      try store.close()
    }

    /// What the next release would do: apply one more migration, marked `mark`, that adds a table.
    static func migrateAsANewerRelease(_ path: String, mark: MigrationCompatibility) throws {
      let next = Migration(
        version: Migrator.latestVersion + 1, name: "next_release",
        sql: "CREATE TABLE pld_next_release (id INTEGER PRIMARY KEY, note TEXT);", compatibility: mark)
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      defer { connection.close() }
      try Migrator(migrations: MigrationCatalog.migrations + [next]).migrate(connection)
    }

    static var nextStem: String {
      Migration.fileStem(version: Migrator.latestVersion + 1, name: "next_release")
    }

    @Test func everyMigrationRecordsItsMarkAndTheEarlierOnesAreMarkedTruthfully() throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("state.db")
      try Self.makeStore(path)
      let expected = MigrationCatalog.migrations.map { "\($0.version):\($0.compatibility.rawValue)" }
      #expect(try Self.marks(path) == expected)
      #expect(expected.first == "1:incompatible", "nothing comes before the initial schema")
      #expect(expected.contains("3:read-only"), "without removals, a removed key's versions restart")
      #expect(
        MigrationCatalog.migrations.filter { ![1, 3].contains($0.version) }.allSatisfy {
          $0.compatibility == .readWrite
        }, "the others only added")
      #expect(MigrationCompatibility.worst(of: [.readWrite, .incompatible, .readOnly]) == .incompatible)
      #expect(MigrationCompatibility.worst(of: []) == .readWrite)
    }

    /// A file of the previous schema (before marks) gets every mark when this library migrates it.
    @Test func aFileOfThePreviousSchemaGetsItsMarksWhenMigrated() throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("old.db")
      let connection = try SQLiteConnection(path: path, mode: .readWrite, create: true)
      try Migrator(migrations: Array(MigrationCatalog.migrations.dropLast())).migrate(connection)
      connection.close()
      let store = try PersistentStore(path: path)
      try store.liveData("counter", default: 0).set(2)
      try store.close()
      #expect(
        try Self.marks(path)
          == MigrationCatalog.migrations.map { "\($0.version):\($0.compatibility.rawValue)" })
    }

    @Test func aReadWriteMigrationOfANewerReleaseIsOpenedAndWrittenAsUsual() throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("state.db")
      try Self.makeStore(path)
      try Self.migrateAsANewerRelease(path, mark: .readWrite)
      let store = try PersistentStore(path: path)
      let counter = try store.liveData("counter", default: 0)
      #expect(counter.value == 1)
      try counter.set(2)
      try store.collection("todo", of: Int.self).set(5, for: "a")
      try store.close()
      let reopened = try PersistentStore(path: path, options: ReadOnlyStoreTests.readOnly)
      #expect(try reopened.liveData("counter", default: 0).value == 2)
      try reopened.close()
      #expect(
        try Self.marks(path).last == "\(Migrator.latestVersion + 1):read-write",
        "the newer release's record stays")
    }

    @Test @MainActor func aReadOnlyMigrationOfANewerReleaseIsReadAndEveryWriteThrowsNamingIt() async throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("state.db")
      try Self.makeStore(path)
      try Self.migrateAsANewerRelease(path, mark: .readOnly)
      let store = try PersistentStore(path: path)
      let counter = try store.liveData("counter", default: 0)
      #expect(counter.value == 1 && counter.version == 1)
      let before = try store.keys()
      let refused = PersistentLiveDataError.readOnlyMigration(path: path, migration: Self.nextStem)
      #expect(throws: refused) { try counter.set(2) }
      #expect(throws: refused) { try counter.update { $0 += 1 } }
      #expect(throws: refused) { try store.liveData("other", default: 0).set(1) }
      #expect(throws: refused) { try store.removeKey("counter") }
      #expect(counter.value == 1 && counter.version == 1, "memory did not move")
      #expect(try store.keys() == before)
      #expect("\(refused)".contains(Self.nextStem))
      try store.close()
      let reader = try PersistentStore(path: path, options: ReadOnlyStoreTests.readOnly)
      #expect(try reader.liveData("counter", default: 0).value == 1, "a read-only store opens it too")
      try reader.close()
    }

    @Test func anIncompatibleMigrationOfANewerReleaseIsRefusedAndTheFileLeftAsItWas() throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("state.db")
      try Self.makeStore(path)
      try Self.migrateAsANewerRelease(path, mark: .incompatible)
      let before = fileBytes(path)
      let newest = Migrator.latestVersion + 1
      let tooNew = PersistentLiveDataError.schemaTooNew(
        path: path, found: newest, supported: Migrator.latestVersion)
      #expect(throws: tooNew) { try PersistentStore(path: path) }
      #expect(throws: tooNew) { try PersistentStore(path: path, options: ReadOnlyStoreTests.readOnly) }
      #expect(fileBytes(path) == before, "byte for byte")
      #expect(try Self.marks(path).count == newest)
    }

    /// A newer file that records no mark for a migration it holds (its row deleted, or a version set by
    /// hand) cannot be judged: it is refused as too new.
    @Test func aNewerFileWithoutTheMarkOfEveryUnknownMigrationIsRefused() throws {
      let folder = try TemporaryDirectory("marks")
      let path = folder.path("state.db")
      try Self.makeStore(path)
      try Self.migrateAsANewerRelease(path, mark: .readWrite)
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      try connection.setPragma("user_version", Int64(Migrator.latestVersion + 2))
      connection.close()
      #expect {
        try PersistentStore(path: path)
      } throws: { error in
        guard case PersistentLiveDataError.schemaTooNew(_, let found, _) = error else { return false }
        return found == Migrator.latestVersion + 2
      }
    }
  }
}
