/// The read-only open (``StoreOptions/readOnly``) and the application check
/// (``StoreOptions/applicationIdentifier``).
extension StoreOpener {
  /// An existing store file of this library's schema, opened without creating, migrating or writing
  /// anything, by the same ``ReadOnlyOpen`` as `pld-tool`.
  func openReadOnly(at path: String) throws -> Opened {
    let file = try StoreFileValidator.checkFile(at: path, access: .readOnly)
    if file == .missing {
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: POSIX.ErrorCode.noEntry,
        reason: "no such file (a store opened with StoreOptions.readOnly is never created)")
    }
    // No claim on the file (OpenFileRegistration): a read-only connection never writes or checkpoints,
    // so it may sit beside this process's writer, which SQLite's WAL-reset bug forbids for a second one.
    let opened = try ReadOnlyOpen.open(
      path: path, file: file, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds,
      verifyingIntegrity: options.verifiesIntegrityOnOpen)
    do {
      // Read alone, the database file would be missing the commits still in -wal, silently.
      if opened.isImmutable, case .success(let wal) = POSIX.linkStatus(path + "-wal"), wal.size > 32 {
        throw PersistentLiveDataError.cannotOpen(
          path: path, code: POSIX.ErrorCode.accessDenied,
          reason: "its -wal file holds commits that cannot be read while the folder cannot be written "
            + "(SQLite must create the -shm file next to it); make the folder writable, or open the store "
            + "once writable elsewhere so that its commits are checkpointed into the file")
      }
      let found = opened.contents.schemaVersion
      // Newer is fine: ReadOnlyOpen refused a file whose unknown migrations forbid opening it.
      guard found >= Migrator.latestVersion else {
        throw PersistentLiveDataError.schemaTooOld(path: path, found: found, required: Migrator.latestVersion)
      }
      try checkApplication(of: opened.connection, path: path)
      return Opened(connection: opened.connection, registration: nil, appliedMigrations: [])
    } catch {
      opened.connection.close()
      throw StoreErrors.map(error, path: path)
    }
  }

  /// Refuses a file recorded for another application than ``StoreOptions/applicationIdentifier``. A file
  /// older than the properties table (schema 5) has no application recorded: any is accepted.
  func checkApplication(of connection: SQLiteConnection, path: String) throws {
    guard let expected = options.applicationIdentifier, !expected.isEmpty,
      let found = try Self.recordedApplication(of: connection), found != expected
    else { return }
    throw PersistentLiveDataError.applicationMismatch(path: path, expected: expected, found: found)
  }

  /// Records ``StoreOptions/applicationIdentifier`` in a file that has none yet (after migrations).
  func recordApplication(in connection: SQLiteConnection) throws {
    guard let identifier = options.applicationIdentifier, !identifier.isEmpty,
      try Self.recordedApplication(of: connection) == nil
    else { return }
    let statement = try connection.prepare(
      "INSERT OR IGNORE INTO pld_store_properties (name, value) VALUES ('application', ?)")
    try statement.bind(identifier, at: 1)
    try statement.run()
  }

  /// The application recorded in the file, or nil (none, or a file without the properties table).
  static func recordedApplication(of connection: SQLiteConnection) throws -> String? {
    let hasTable =
      try connection.scalarInt64(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'pld_store_properties'") ?? 0 > 0
    guard hasTable else { return nil }
    let statement = try connection.prepare(
      "SELECT value FROM pld_store_properties WHERE name = 'application'")
    return try statement.step() ? statement.text(0) : nil
  }
}
