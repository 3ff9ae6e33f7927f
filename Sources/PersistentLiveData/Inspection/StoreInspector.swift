/// A read-only view of a store file, for tools: what is stored, since when, and whether it is sound.
///
/// An inspector opens an existing file **read-only** and never creates, migrates or writes it, so the
/// database file stays byte-for-byte as it was — also while an application writes to it (in WAL mode,
/// readers and the writer do not block each other). Before reading, it checks that the file is a
/// PersistentLiveData store: a missing file, a file that is not SQLite, another application's database
/// (its `application_id` is not ``Migrator/applicationID`` and it holds tables) or a schema newer than
/// this library are refused with one error naming the file. A database without any table (a 0-byte
/// file, say) is accepted as an empty store. These checks are the store's own
/// (``StoreFileValidator``), so a file the library opens is one the inspector opens, and the reverse;
/// only `PRAGMA quick_check` is left to ``summary()`` and ``verify(progress:)`` (except for a file cut
/// short by an interrupted checkpoint, which it confirms at once), so that a damaged file can still be
/// inspected and exported.
///
/// The connection is opened with ``SQLiteConnection/OpenMode/readOnly``. Only when that fails and the
/// file's folder is not writable (read-only media, another user's folder) does the inspector fall back
/// to ``SQLiteConnection/OpenMode/readOnlyImmutable``: SQLite then reads the database file alone, without
/// locks and without its `-wal` file ("SQLite assumes that the database file cannot be changed"), so
/// commits still in a `-wal` file are not seen. ``accessMode`` tells which mode was used.
///
/// Not thread-safe: use an inspector from one thread at a time.
///
/// ```swift
/// let inspector = try StoreInspector(path: "app.db")
/// defer { inspector.close() }
/// for key in try inspector.keyStatistics() {
///   print(key.key, key.currentVersion, key.versionCount)
/// }
/// ```
package final class StoreInspector {
  /// How the file was opened.
  package enum AccessMode: Sendable, Hashable {
    /// A normal read-only connection: sees every commit, including those still in the `-wal` file.
    case readOnly
    /// An immutable read of the database file alone (the folder is not writable): a `-wal` file is
    /// ignored and later commits by other processes are not seen.
    case immutable
  }

  /// The path as given to ``init(path:)``; errors name the file with it.
  package let path: String
  /// How the connection was opened.
  package let accessMode: AccessMode
  /// The file's schema version (0 for a database without tables).
  package let schemaVersion: Int
  /// Whether the file has the `pld_values` table; `false` for an empty database.
  let hasValuesTable: Bool
  /// The expression of a row's value schema version in this file's statements: `schema_version`, or
  /// `1` for a file older than the column (an inspector never migrates).
  var schemaVersionColumn: String { InspectionSQL.schemaVersionColumn(fileSchema: schemaVersion) }
  /// What this file's row statements read after the payload (``InspectionSQL/rowColumns(fileSchema:)``).
  var rowColumns: String { InspectionSQL.rowColumns(fileSchema: schemaVersion) }
  /// Whether the file's header says WAL mode (an immutable connection reports `delete` instead).
  let headerIsWAL: Bool
  /// The read-only connection.
  let connection: SQLiteConnection
  /// How a truncated file opened for salvaging falls short ("truncated: 2000000 bytes of 5009408"); nil
  /// for a whole file.
  let truncation: String?

  /// How long a read waits for a lock held by a writer (only during WAL recovery or a reset).
  static let busyTimeoutMilliseconds = 2_000

  /// Opens the store at `path` read-only and checks that it is a PersistentLiveData store.
  ///
  /// ```swift
  /// let inspector = try StoreInspector(path: "/var/lib/app/state.db")
  /// print(inspector.schemaVersion)
  /// ```
  /// - Parameters:
  ///   - path: An existing database file. Symbolic links are refused, as by the store.
  ///   - salvaging: Open a truncated file too, for reading what is left of it (`pld-tool verify`,
  ///     `export --salvage`, `keys --salvage`): the missing pages then read as damage. Without it a
  ///     truncated file is refused as `corrupt`.
  /// - Throws: ``InspectionError/missingFile(path:)`` when nothing is at `path`;
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError`` `notADatabase`, `isADirectory`, `corrupt`
  ///   (truncated or damaged), `foreignDatabase`, `schemaTooNew`, `symbolicLink`, `cannotOpen` or another
  ///   storage error naming the file.
  package init(path: String, salvaging: Bool = false) throws {
    self.path = path
    let file = try StoreFileValidator.checkFile(at: path, access: .readOnly, acceptsTruncated: salvaging)
    if file == .missing { throw InspectionError.missingFile(path: path) }
    truncation = salvaging ? Self.truncation(of: path) : nil
    headerIsWAL = file.header?.isWAL ?? false
    let opened: Opened
    do {
      opened = try Self.openValidated(path: path, file: file, salvaging: salvaging)
    } catch PersistentLiveDataError.corrupt where truncation != nil {
      // Opening reads only the header and the definitions of the tables (which take more than the first
      // page once the schema is large): damaged in a truncated file, they are gone with its end.
      throw InspectionError.unreadable(
        path: path, reason: "\(truncation ?? ""): the file ends before the definitions of its tables")
    }
    connection = opened.connection
    accessMode = opened.mode
    schemaVersion = opened.schemaVersion
    hasValuesTable = opened.hasValuesTable
    if let truncation, !hasValuesTable {
      // The definitions of the tables are gone with the end of the file: salvaging would find nothing
      // and call it an empty store.
      connection.close()
      throw InspectionError.unreadable(
        path: path, reason: "\(truncation): the file ends before the definitions of its tables")
    }
  }

  deinit {
    connection.close()
  }

  /// Closes the connection. Later calls throw
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)``. Idempotent.
  package func close() {
    connection.close()
  }

  /// Runs `body`, turning SQLite errors into ``/PersistentLiveDataBackend/PersistentLiveDataError``s that
  /// name the file.
  func reading<Result>(_ body: () throws -> Result) throws -> Result {
    guard connection.isOpen else { throw PersistentLiveDataError.storeClosed(path: path) }
    do {
      return try body()
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }

  /// Runs the read-only `body` in one read transaction (one snapshot of the file), ended by a rollback:
  /// a `COMMIT` would report the damage a read inside met again, and a read has nothing to commit.
  func inReadTransaction<Result>(_ body: () throws -> Result) throws -> Result {
    try connection.begin(.deferred)
    defer { connection.rollback() }
    return try body()
  }

  // MARK: Backup

  /// Copies the store into a new file at `destination`, as ``PersistentStore/backup(to:)`` does, without
  /// writing the source (`pld-tool backup`). An immutable open copies the database file alone.
  ///
  /// ```swift
  /// try StoreInspector(path: "app.db").backup(to: "app-backup.db")
  /// ```
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/fileExists(path:)`` and the other errors
  ///   of ``PersistentStore/backup(to:)``.
  package func backup(to destination: String) throws {
    try StoreBackup.write(to: destination) { target in
      try StoreBackup.vacuum(connection, of: path, into: target, naming: destination)
    }
  }

  // MARK: Opening

  private struct Opened {
    let connection: SQLiteConnection
    let mode: AccessMode
    let schemaVersion: Int
    let hasValuesTable: Bool
  }

  /// Opens read-only and validates, as a read-only store does (``ReadOnlyOpen``).
  private static func openValidated(
    path: String, file: StoreFileValidator.FileVerdict, salvaging: Bool
  ) throws -> Opened {
    let opened = try ReadOnlyOpen.open(
      path: path, file: file, busyTimeoutMilliseconds: busyTimeoutMilliseconds, salvaging: salvaging)
    do {
      let hasValuesTable =
        try opened.connection.scalarInt64(
          "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'pld_values'") ?? 0 > 0
      return Opened(
        connection: opened.connection, mode: opened.isImmutable ? .immutable : .readOnly,
        schemaVersion: opened.contents.schemaVersion, hasValuesTable: hasValuesTable)
    } catch {
      opened.connection.close()
      throw StoreErrors.map(error, path: path)
    }
  }

  /// What the file check says of a truncated file at `path`; nil when it does not refuse the file so.
  private static func truncation(of path: String) -> String? {
    do {
      _ = try StoreFileValidator.checkFile(at: path, access: .readOnly)
      return nil
    } catch {
      guard case .corrupt(_, let detail) = error else { return nil }
      return detail
    }
  }
}
