/// The migrations compiled into the library, in order.
///
/// Each file of `Migrations/` is embedded by a `.embedInCode("../../Migrations/NNNN_name.sql")` line in
/// `Package.swift`; SwiftPM exposes it as `PackageResources._NNN_name_sql` (a leading digit becomes `_`),
/// a `[UInt8]` without the file name, so ``files`` pairs each with its name. A test compares this list
/// with the folder's listing, so a new file cannot be forgotten.
///
/// Adding a migration: add the file, its `.embedInCode` line, and a row to ``files``.
enum MigrationCatalog {
  /// File name and embedded bytes of every migration, in version order.
  static let files: [(fileName: String, bytes: [UInt8])] = [
    ("0001_initial_schema.sql", PackageResources._001_initial_schema_sql),
    ("0002_value_schema_versions.sql", PackageResources._002_value_schema_versions_sql),
    ("0003_removed_keys.sql", PackageResources._003_removed_keys_sql),
    ("0004_key_retention.sql", PackageResources._004_key_retention_sql),
    ("0005_store_properties.sql", PackageResources._005_store_properties_sql),
    ("0006_change_log.sql", PackageResources._006_change_log_sql),
    ("0007_write_attribution.sql", PackageResources._007_write_attribution_sql),
    ("0008_collections.sql", PackageResources._008_collections_sql),
    ("0009_migration_compatibility.sql", PackageResources._009_migration_compatibility_sql),
  ]

  /// Every migration, ordered by version.
  ///
  /// A file whose name does not parse is left out here; the catalog test catches it.
  package static let migrations: [Migration] = files.compactMap { file in
    Migration(fileName: file.fileName, sql: String(decoding: file.bytes, as: UTF8.self)).map { migration in
      var marked = migration
      marked.compatibility = marks[migration.version] ?? .readWrite
      return marked
    }
  }.sorted { $0.version < $1.version }

  /// What a library that does not know each migration may do with a file it was applied to (the README's
  /// compatibility promise), for those not marked ``MigrationCompatibility/readWrite``. Recorded in
  /// `pld_migrations` when applied (0001–0008 by migration 0009). A new migration that is not read-write is
  /// added here with its file.
  static let marks: [Int: MigrationCompatibility] = [
    // The initial schema: there is nothing before it.
    1: .incompatible,
    // Removals: a library without them would number a removed key's next version from 1 again.
    3: .readOnly,
  ]

  /// The file names of ``files``, for the catalog test.
  static var fileNames: [String] { files.map(\.fileName) }

  /// The newest schema version this library knows (0 if the catalog were empty).
  static var latestVersion: Int { migrations.last?.version ?? 0 }
}
