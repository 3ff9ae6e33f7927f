internal import Foundation

/// Brings a database file to the newest schema, one transaction per migration.
///
/// The schema version of a file is the higher of `PRAGMA user_version` and the newest row of
/// `pld_migrations` (the two are written in the same transaction, so they agree unless someone edited the
/// file). Each missing migration runs inside its own `BEGIN IMMEDIATE` transaction together with its
/// bookkeeping: the row in `pld_migrations`, `PRAGMA user_version = N` and `PRAGMA application_id`. A
/// migration that fails is rolled back completely; the ones before it stay applied.
///
/// SQLite: "The user_version pragma will get or set the value of the user-version integer at offset 60 in
/// the database header" — a header write is part of the transaction like any page, so a version is never
/// recorded without its schema.
///
/// ```swift
/// let connection = try SQLiteConnection(path: path)
/// try connection.setPragma("journal_mode", "WAL")   // not allowed inside a transaction: do it first
/// try Migrator().migrate(connection)
/// ```
struct Migrator: Sendable {
  /// `PRAGMA application_id` of every PersistentLiveData store: `0x504C4431`, "PLD1" in ASCII.
  static let applicationID: Int32 = 0x504C_4431
  /// The newest schema version of the embedded catalog.
  static var latestVersion: Int { MigrationCatalog.latestVersion }

  /// The migrations this migrator applies, ordered by version.
  package let migrations: [Migration]

  /// The newest version of ``migrations``.
  package var newestVersion: Int { migrations.last?.version ?? 0 }

  /// A migrator for `migrations` (the embedded catalog by default; tests pass their own list).
  ///
  /// - Parameter migrations: Numbered 1, 2, 3 … in any order; checked when used.
  package init(migrations: [Migration] = MigrationCatalog.migrations) {
    self.migrations = migrations.sorted { $0.version < $1.version }
  }

  /// The file's schema version: the higher of `user_version` and the newest `pld_migrations` row.
  ///
  /// Reads only; works on a read-only connection.
  ///
  /// - Throws: ``SQLiteError`` (e.g. `SQLITE_NOTADB` for a file that is not a database).
  package func schemaVersion(of connection: SQLiteConnection) throws -> Int {
    let userVersion = Int(try connection.pragmaInt("user_version"))
    let hasTable =
      try connection.scalarInt64(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pld_migrations'") ?? 0 > 0
    guard hasTable else { return userVersion }
    let recorded = Int(try connection.scalarInt64("SELECT max(version) FROM pld_migrations") ?? 0)
    return max(userVersion, recorded)
  }

  /// The migrations the file still needs, after checking it can be migrated. Reads only.
  ///
  /// - Returns: An empty list when the file is up to date.
  /// - Throws: ``MigrationError/schemaTooNew(found:supported:)``,
  ///   ``MigrationError/foreignDatabase(applicationID:)``,
  ///   ``MigrationError/invalidMigrationList(versions:)``, or ``SQLiteError``.
  func pendingMigrations(for connection: SQLiteConnection) throws -> [Migration] {
    try validateList()
    let current = try checkedSchemaVersion(of: connection)
    return migrations.filter { $0.version > current }
  }

  /// Applies every missing migration in order, each in its own `BEGIN IMMEDIATE` transaction.
  ///
  /// Idempotent: an up-to-date file is not written to. Safe against another process migrating at the same
  /// time: the version is read again once the write lock is held, and a migration already applied is
  /// skipped. Call it outside a transaction.
  ///
  /// - Parameter connection: A read-write connection.
  /// - Returns: The migrations applied now (empty when none was needed).
  /// - Throws: ``MigrationError`` (nothing changed) or ``SQLiteError`` from the failing migration, which is
  ///   rolled back; the migrations before it stay applied.
  @discardableResult
  func migrate(_ connection: SQLiteConnection) throws -> [Migration] {
    var applied: [Migration] = []
    for migration in try pendingMigrations(for: connection) {
      let didApply = try connection.inTransaction(.immediate) { () throws -> Bool in
        // Under the write lock: another connection may have migrated since pendingMigrations.
        let current = try checkedSchemaVersion(of: connection)
        guard current < migration.version else { return false }
        try connection.execute(migration.sql)
        let appliedAt = SQLiteValue.integer(Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        if try Self.recordsCompatibility(connection) {
          try connection.prepare(
            "INSERT INTO pld_migrations(version, name, applied_at, compatibility) VALUES (?, ?, ?, ?)"
          ).run(bindings: [
            .integer(Int64(migration.version)), .text(migration.name), appliedAt,
            .text(migration.compatibility.rawValue),
          ])
        } else {
          try connection.prepare(
            "INSERT INTO pld_migrations(version, name, applied_at) VALUES (?, ?, ?)"
          ).run(bindings: [.integer(Int64(migration.version)), .text(migration.name), appliedAt])
        }
        try connection.setPragma("user_version", Int64(migration.version))
        try connection.setPragma("application_id", Int64(Self.applicationID))
        return true
      }
      if didApply { applied.append(migration) }
    }
    return applied
  }

  /// Whether `pld_migrations` has the `compatibility` column (migration 0009 on).
  static func recordsCompatibility(_ connection: SQLiteConnection) throws -> Bool {
    try connection.scalarInt64(
      "SELECT count(*) FROM pragma_table_info('pld_migrations') WHERE name = 'compatibility'") ?? 0 > 0
  }

  // MARK: Checks

  private func validateList() throws {
    let versions = migrations.map(\.version)
    guard versions == Array(0..<versions.count).map({ $0 + 1 }) else {
      throw MigrationError.invalidMigrationList(versions: versions)
    }
  }

  /// The schema version, after refusing what ``StoreFileValidator/identify(_:supportedVersion:)`` calls
  /// foreign or too new (up to ``newestVersion``).
  private func checkedSchemaVersion(of connection: SQLiteConnection) throws -> Int {
    switch try StoreFileValidator.identify(connection, supportedVersion: newestVersion) {
    case .empty:
      return 0
    case .store(let schemaVersion), .newer(let schemaVersion, _, _):
      // Newer, but every migration it does not know allows this version to open it: nothing to apply.
      return schemaVersion
    case .foreign(let applicationID):
      throw MigrationError.foreignDatabase(applicationID: applicationID)
    case .tooNew(let found, let supported):
      throw MigrationError.schemaTooNew(found: found, supported: supported)
    }
  }
}
