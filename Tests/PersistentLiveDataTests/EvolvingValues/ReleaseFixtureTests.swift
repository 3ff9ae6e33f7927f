import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension ValueSchemas {
  /// `Tests/Fixtures/release-schema-1.db`, written by `pld-tool` of the release before schema versions
  /// (file schema 1): key `note` (3 versions of `NoteV1`), `counter` (1, 2) and `pruned` (versions 3 and
  /// 4 of 4 kept). See Tests/Fixtures/README.md.
  @Suite struct ReleaseFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/release-schema-1.db").path

    /// A copy of the fixture in `folder`.
    static func copy(into folder: TemporaryDirectory) throws -> String {
      let path = folder.path("release.db")
      try FileManager.default.copyItem(atPath: fixture, toPath: path)
      return path
    }

    /// Every row as key|version|written_at|hex(payload), by key then version.
    static func rowsWithoutSchema(_ path: String) throws -> [String] {
      try SQLiteCLI.query(
        path, "SELECT key, version, written_at, hex(payload) FROM pld_values ORDER BY key, version"
      ).split(separator: "\n").map(String.init)
    }

    @Test func theFixtureIsAFileOfTheReleaseBeforeSchemaVersions() throws {
      guard SQLiteCLI.isAvailable else { return }
      #expect(!FileManager.default.fileExists(atPath: Self.fixture + "-wal"))
      // Read a copy: even a read-only client creates -wal and -shm files beside a WAL database.
      let folder = try TemporaryDirectory()
      let path = try Self.copy(into: folder)
      #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "1")
      #expect(
        try SQLiteCLI.query(path, "SELECT name FROM pragma_table_info('pld_values')") == """
          key
          version
          written_at
          payload
          """)
      #expect(try Self.rowsWithoutSchema(path).count == 7)
    }

    @Test func openingItUpgradesTheFileInPlaceAndEveryOlderRowIsSchema1() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = try Self.copy(into: folder)
      let before = try Self.rowsWithoutSchema(path)

      let store = try PersistentStore(path: path)
      #expect(try store.keys() == ["counter", "note", "pruned"])
      #expect(try store.liveData("counter", default: 0).value == 2)
      let note = try store.liveData("note", default: NoteV3(title: "", tags: [], pinned: false))
      #expect(note.version == 3)
      #expect(note.value == NoteV3(title: "shopping", tags: ["home", "errands"], pinned: false))
      #expect(try note.historyEntries().map(\.schemaVersion) == [1, 1, 1])
      #expect(try note.history().map(\.value.tags.count) == [2, 2, 1])
      let pruned = try store.liveData("pruned", default: "")
      #expect(try pruned.history().map(\.version) == [4, 3])
      try note.set(NoteV3(title: "after the upgrade", tags: [], pinned: true))
      try store.close()

      #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "9")
      #expect(
        try SQLiteCLI.query(path, "SELECT version, name, compatibility FROM pld_migrations ORDER BY version")
          == "1|initial_schema|incompatible\n2|value_schema_versions|read-write\n3|removed_keys|read-only\n"
          + "4|key_retention|read-write\n5|store_properties|read-write\n6|change_log|read-write\n"
          + "7|write_attribution|read-write\n8|collections|read-write\n9|migration_compatibility|read-write")
      // Every row written before reads without an attribution.
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values WHERE author IS NOT NULL") == "0")
      // The change log starts with the migration; nobody else read it, so the write after it logged nothing,
      // and the store's registration as a reader was deleted when it closed.
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_change_log") == "0")
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_change_log_readers") == "0")
      let after = try Self.rowsWithoutSchema(path)
      #expect(Array(after.filter { !$0.hasPrefix("note|4|") }) == before, "no stored row changed")
      #expect(
        try SQLiteCLI.query(path, "SELECT key, version, schema_version FROM pld_values ORDER BY key, version")
          == """
          counter|1|1
          counter|2|1
          note|1|1
          note|2|1
          note|3|1
          note|4|3
          pruned|3|1
          pruned|4|1
          """)
    }

    @Test func theInspectorReadsItAsSchema1WithoutMigratingIt() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.copy(into: folder)
      let bytes = fileBytes(path)
      let inspector = try StoreInspector(path: path)
      #expect(inspector.schemaVersion == 1)
      #expect(try inspector.rows(key: "note").map(\.schemaVersion) == [1, 1, 1])
      #expect(try inspector.keyStatistics().map(\.schemaVersion) == [1, 1, 1])
      var exported: [Int] = []
      try inspector.forEachRow { exported.append($0.schemaVersion) }
      #expect(exported == Array(repeating: 1, count: 7))
      let report = try inspector.verify()
      #expect(report.isOK)
      #expect(report.schemaVersions.map(\.key) == ["counter", "note", "pruned"])
      #expect(report.schemaVersions.map(\.versionCounts) == [[1: 2], [1: 3], [1: 2]])
      inspector.close()
      #expect(fileBytes(path) == bytes)
    }
  }
}
