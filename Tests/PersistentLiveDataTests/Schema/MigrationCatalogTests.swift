import Foundation
import Testing

@testable import PersistentLiveData

extension MigrationTests {
  @Suite struct MigrationCatalogTests {
    /// `<package>/Migrations`, found from this file's path (`Tests/PersistentLiveDataTests/Schema/…`).
    static let migrationsFolder = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Migrations")

    @Test func catalogMatchesTheMigrationsFolder() throws {
      let listing = try FileManager.default.contentsOfDirectory(atPath: Self.migrationsFolder.path)
        .filter { $0.hasSuffix(".sql") }.sorted()
      #expect(!listing.isEmpty)
      #expect(MigrationCatalog.fileNames == listing)
      #expect(MigrationCatalog.migrations.count == listing.count)
    }

    @Test func embeddedSQLIsTheFileContent() throws {
      for (fileName, migration) in zip(MigrationCatalog.fileNames, MigrationCatalog.migrations) {
        let onDisk = try String(
          contentsOf: Self.migrationsFolder.appendingPathComponent(fileName), encoding: .utf8)
        #expect(migration.sql == onDisk, "\(fileName)")
      }
    }

    @Test func versionsAreContiguousFromOne() {
      let versions = MigrationCatalog.migrations.map(\.version)
      #expect(versions == Array(1...versions.count))
      #expect(Migrator.latestVersion == versions.count)
      #expect(MigrationCatalog.migrations.first?.name == "initial_schema")
    }

    @Test func fileNamesParse() {
      #expect(
        Migration(fileName: "0001_initial_schema.sql", sql: "")
          == Migration(version: 1, name: "initial_schema", sql: ""))
      #expect(Migration(fileName: "0012_add_index_on_x.sql", sql: "")?.version == 12)
      #expect(Migration(fileName: "0012_add_index_on_x.sql", sql: "")?.name == "add_index_on_x")
      for bad in [
        "0001_initial_schema.txt", "initial_schema.sql", "0000_zero.sql", "0001_.sql", "_x.sql", "1a_x.sql",
        "١_x.sql",
      ] {
        #expect(Migration(fileName: bad, sql: "") == nil, "\(bad)")
      }
    }
  }
}
