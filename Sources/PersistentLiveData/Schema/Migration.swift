/// One schema step: a numbered SQL script from the `Migrations/` folder.
///
/// The file name gives the version and the name: `0001_initial_schema.sql` is version 1, named
/// `initial_schema`. Shipped files are never edited; a change of schema is a new file.
///
/// ```swift
/// let migration = Migration(fileName: "0002_add_index.sql", sql: "CREATE INDEX …")
/// // migration?.version == 2, migration?.name == "add_index"
/// ```
package struct Migration: Sendable, Hashable {
  /// The schema version this migration brings the file to (1, 2, 3 …).
  package let version: Int
  /// The name, e.g. `initial_schema`.
  package let name: String
  /// The SQL script, run inside the migration's transaction. It must not contain `BEGIN`/`COMMIT` or
  /// statements that cannot run in a transaction (`PRAGMA journal_mode`, `VACUUM`).
  package let sql: String
  /// What a library that does not know this migration may do with a file it was applied to.
  package var compatibility: MigrationCompatibility = .readWrite

  /// Creates a migration from its parts (tests use this to inject lists).
  package init(
    version: Int, name: String, sql: String, compatibility: MigrationCompatibility = .readWrite
  ) {
    self.compatibility = compatibility
    self.version = version
    self.name = name
    self.sql = sql
  }

  /// Creates a migration from a file name `NNNN_name.sql`; `nil` when the name does not have that form
  /// (digits, an underscore, a non-empty name, the `.sql` extension) or the number is 0.
  ///
  /// - Parameters:
  ///   - fileName: The last path component, e.g. `0001_initial_schema.sql`.
  ///   - sql: The file's content.
  package init?(fileName: String, sql: String) {
    guard fileName.hasSuffix(".sql") else { return nil }
    let stem = fileName.dropLast(4)
    guard let underscore = stem.firstIndex(of: "_") else { return nil }
    let digits = stem[..<underscore]
    let name = stem[stem.index(after: underscore)...]
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
      let version = Int(digits), version > 0, !name.isEmpty
    else { return nil }
    self.init(version: version, name: String(name), sql: sql)
  }

  /// `0010_name`: a migration's version, four digits at least, and its name, as its file is named.
  static func fileStem(version: Int, name: String) -> String {
    let digits = String(version)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
  }
}
