/// Why the migrator refused a database or a list of migrations.
///
/// ```swift
/// do { try Migrator().migrate(connection) }
/// catch MigrationError.schemaTooNew(let found, let supported) { … }
/// ```
enum MigrationError: Error, CustomStringConvertible, Sendable, Hashable {
  /// The file was written by a newer version of the library; nothing was changed.
  case schemaTooNew(found: Int, supported: Int)
  /// The file belongs to another application: its `application_id` is not ours, or it has no
  /// `application_id` but already holds tables. Nothing was changed.
  case foreignDatabase(applicationID: Int32)
  /// The migration list is not numbered 1, 2, 3 … without gaps or duplicates (a programming error).
  case invalidMigrationList(versions: [Int])

  /// One sentence naming the versions involved.
  package var description: String {
    switch self {
    case .schemaTooNew(let found, let supported):
      "the database has schema version \(found), newer than version \(supported) supported by this library"
    case .foreignDatabase(let applicationID):
      "the database is not a PersistentLiveData store (application_id \(applicationID))"
    case .invalidMigrationList(let versions):
      "the migrations must be numbered 1, 2, 3 … without gaps; found \(versions)"
    }
  }
}
