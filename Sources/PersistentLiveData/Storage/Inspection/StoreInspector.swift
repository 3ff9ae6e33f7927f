#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A read-only view of a store file, for tools: what is stored, since when, and whether it is sound.
///
/// An inspector opens an existing file **read-only** and never creates, migrates or writes it, so the
/// database file stays byte-for-byte as it was — also while an application writes to it (in WAL mode,
/// readers and the writer do not block each other). Before reading, it checks that the file is a
/// PersistentLiveData store: a missing file, a file that is not SQLite, another application's database
/// (its `application_id` is not ``Migrator/applicationID`` and it holds tables) or a schema newer than
/// this library are refused with one error naming the file. A database without any table (a 0-byte
/// file, say) is accepted as an empty store.
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
  /// Whether the file's header says WAL mode (an immutable connection reports `delete` instead).
  let headerIsWAL: Bool
  /// The read-only connection.
  let connection: SQLiteConnection

  /// How long a read waits for a lock held by a writer (only during WAL recovery or a reset).
  static let busyTimeoutMilliseconds = 2_000

  /// Opens the store at `path` read-only and checks that it is a PersistentLiveData store.
  ///
  /// ```swift
  /// let inspector = try StoreInspector(path: "/var/lib/app/state.db")
  /// print(inspector.schemaVersion)
  /// ```
  /// - Parameter path: An existing database file. Symbolic links are refused, as by the store.
  /// - Throws: ``InspectionError/missingFile(path:)`` when nothing is at `path`;
  ///   ``PersistentLiveDataError`` `notADatabase`, `corrupt` (truncated or damaged), `foreignDatabase`,
  ///   `schemaTooNew`, `symbolicLink`, `cannotOpen` or another storage error naming the file.
  package init(path: String) throws {
    self.path = path
    headerIsWAL = try Self.checkFile(at: path)
    let opened = try Self.openValidated(path: path)
    connection = opened.connection
    accessMode = opened.mode
    schemaVersion = opened.schemaVersion
    hasValuesTable = opened.hasValuesTable
  }

  deinit {
    connection.close()
  }

  /// Closes the connection. Later calls throw ``PersistentLiveDataError/storeClosed(path:)``. Idempotent.
  package func close() {
    connection.close()
  }

  /// Runs `body`, turning SQLite errors into ``PersistentLiveDataError``s that name the file.
  func reading<Result>(_ body: () throws -> Result) throws -> Result {
    guard connection.isOpen else { throw PersistentLiveDataError.storeClosed(path: path) }
    do {
      return try body()
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }

  // MARK: Opening

  private struct Opened {
    let connection: SQLiteConnection
    let mode: AccessMode
    let schemaVersion: Int
    let hasValuesTable: Bool
  }

  /// Refuses what is not a regular SQLite file before SQLite sees it (without writing anything); returns
  /// whether the header says WAL mode.
  private static func checkFile(at path: String) throws -> Bool {
    let status: DatabaseFileStatus
    do {
      status = try DatabaseFile.classify(path: path)
    } catch {
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: error.errno, reason: Self.reason(error.errno))
    }
    switch status {
    case .missing:
      throw InspectionError.missingFile(path: path)
    case .symbolicLink:
      throw PersistentLiveDataError.symbolicLink(path: path)
    case .notRegularFile, .notSQLite:
      throw PersistentLiveDataError.notADatabase(path: path)
    case .truncated(let header, let fileSize):
      throw PersistentLiveDataError.corrupt(
        path: path, detail: "truncated: \(fileSize) bytes of \(header.expectedFileSize ?? 0)")
    case .empty:
      return false
    case .sqlite(let header, _):
      return header.isWAL
    }
  }

  /// Opens read-only and validates; falls back to an immutable open when the folder is not writable
  /// and the normal read-only open could not read the file.
  private static func openValidated(path: String) throws -> Opened {
    do {
      return try open(path: path, mode: .readOnly)
    } catch let error as SQLiteError
      where (error.isCantOpen || error.isReadOnly) && !isFolderWritable(of: path)
    {
      // "A WAL database in a directory the process cannot write cannot even be read" (-shm cannot be
      // created): read the database file alone.
      do {
        return try open(path: path, mode: .immutable)
      } catch let immutableError as SQLiteError {
        throw StoreErrors.map(immutableError, path: path)
      }
    } catch let error as SQLiteError {
      throw StoreErrors.map(error, path: path)
    }
  }

  private static func open(path: String, mode: AccessMode) throws -> Opened {
    let connection = try SQLiteConnection(
      path: path, mode: mode == .readOnly ? .readOnly : .readOnlyImmutable)
    do {
      try connection.busyTimeout(busyTimeoutMilliseconds)
      let (schemaVersion, hasValuesTable) = try validate(connection, path: path)
      return Opened(
        connection: connection, mode: mode, schemaVersion: schemaVersion, hasValuesTable: hasValuesTable)
    } catch {
      connection.close()
      throw error
    }
  }

  /// The checks of ``StoreOpener``, read-only: our `application_id` (or no table at all), a schema this
  /// library knows. Reads through SQLite, so a header still in the `-wal` file counts.
  private static func validate(_ connection: SQLiteConnection, path: String) throws -> (Int, Bool) {
    let applicationID = Int32(truncatingIfNeeded: try connection.pragmaInt("application_id"))
    let objectCount = try connection.scalarInt64("SELECT count(*) FROM sqlite_schema") ?? 0
    if applicationID != Migrator.applicationID {
      guard applicationID == 0, objectCount == 0 else {
        throw PersistentLiveDataError.foreignDatabase(path: path)
      }
    }
    let schemaVersion = try Migrator().schemaVersion(of: connection)
    if schemaVersion > Migrator.latestVersion {
      throw PersistentLiveDataError.schemaTooNew(
        path: path, found: schemaVersion, supported: Migrator.latestVersion)
    }
    let hasValuesTable =
      try connection.scalarInt64(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'pld_values'") ?? 0 > 0
    return (schemaVersion, hasValuesTable)
  }

  /// Whether the current user may create files in the folder of `path` (`access(2)` with `W_OK`, which
  /// also reports read-only mounts and immutable folders for root).
  static func isFolderWritable(of path: String) -> Bool {
    let folder: String
    if let slash = path.lastIndex(of: "/") {
      folder = slash == path.startIndex ? "/" : String(path[..<slash])
    } else {
      folder = "."
    }
    return access(folder, W_OK) == 0
  }

  private static func reason(_ code: Int32) -> String {
    strerror(code).map { String(cString: $0) } ?? "error \(code)"
  }
}
