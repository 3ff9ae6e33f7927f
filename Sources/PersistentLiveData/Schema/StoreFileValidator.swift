internal import Foundation

/// The one answer to "is this file a PersistentLiveData store?", given alike to the store
/// (``StoreOpener``), to pld-tool (``StoreInspector``) and to the ``Migrator``.
///
/// It answers in two steps, neither of which writes anything:
///
/// 1. ``checkFile(at:access:)``, before SQLite sees the file: what is at the path (nothing, a directory, a
///    symbolic link, a file that is not SQLite, a truncated database), and whether a `-wal` or `-shm`
///    next to it is a symbolic link SQLite would refuse.
/// 2. ``checkContents(of:path:file:verifyingIntegrity:)``, through an open connection (read-write or
///    read-only): a new, empty database; our `application_id` or another application's; a schema this
///    library knows or a newer one; and, when asked (or when the file needs it), `PRAGMA quick_check`.
///    ``identify(_:supportedVersion:)`` is the part of it the migrator shares.
///
/// A file shorter than its header says is only damage when no `-wal` file lies next to it: a checkpoint
/// copies pages in increasing order, page 1 (holding the new size) first, so a crash in the middle of one
/// leaves a short file whose missing pages are all in the WAL. Such a file passes the first step and is
/// then always confirmed by `quick_check`, whatever the caller asked; read immutably (the WAL ignored), it
/// is refused as truncated.
///
/// ```swift
/// let file = try StoreFileValidator.checkFile(at: path, access: .readOnly)
/// if file == .missing { throw InspectionError.missingFile(path: path) }
/// let connection = try SQLiteConnection(path: path, mode: .readOnly)
/// let contents = try StoreFileValidator.checkContents(
///   of: connection, path: path, file: file, verifyingIntegrity: false)
/// print(contents.schemaVersion)
/// ```
package enum StoreFileValidator {
  /// How the caller will read the file.
  package enum Access: Sendable, Hashable {
    /// A read-write connection (the store): SQLite reads the `-wal` file.
    case readWrite
    /// A read-only connection: SQLite still reads the `-wal` file.
    case readOnly
    /// An immutable read of the database file alone (`immutable=1`): a `-wal` file is never read.
    case immutable
  }

  /// What the file-level check found at the path, when it does not refuse it.
  package enum FileVerdict: Sendable, Hashable {
    /// Nothing is at the path: the store creates the file, tools report it missing.
    case missing
    /// A 0-byte file, which SQLite treats as an empty database.
    case empty
    /// An SQLite database at least as long as its header says.
    case database(DatabaseFileHeader)
    /// An SQLite database shorter than its header says, with a non-empty `-wal` file that may hold the
    /// missing pages (an interrupted checkpoint). Only `quick_check` can tell.
    case databaseCompletedByWAL(DatabaseFileHeader)
    /// A file whose first page is not a readable SQLite header, with a non-empty `-wal` file that may hold
    /// page 1 (a power loss tore the page while a checkpoint or the file's creation wrote it). SQLite reads
    /// page 1 from the WAL if it is there and refuses the file otherwise; `quick_check` confirms.
    case pageOneInWAL
    /// A file whose creation a power loss interrupted before its first page reached the disk
    /// (``DatabaseFile/isInterruptedCreation(path:fileSize:)``): zeros, next to the hot rollback journal
    /// of an empty database. SQLite's read-write open replays the journal, which leaves an empty file;
    /// only given with ``Access/readWrite`` (a read-only connection cannot replay it).
    case interruptedCreation

    /// Whether the content check must run `PRAGMA quick_check` whatever the caller asked.
    var needsIntegrityCheck: Bool {
      switch self {
      case .databaseCompletedByWAL, .pageOneInWAL, .interruptedCreation: true
      case .missing, .empty, .database: false
      }
    }

    /// The header, when the file has one.
    package var header: DatabaseFileHeader? {
      switch self {
      case .missing, .empty, .pageOneInWAL, .interruptedCreation: nil
      case .database(let header), .databaseCompletedByWAL(let header): header
      }
    }
  }

  /// What a database holds, by its identity: ``identify(_:supportedVersion:)``.
  package enum Identity: Sendable, Hashable {
    /// A new database: no `application_id`, no schema version, no table, view, index or trigger.
    case empty
    /// A PersistentLiveData store of a schema version this library knows.
    case store(schemaVersion: Int)
    /// Another application's database: its `application_id` is not ours, or it has none but holds a
    /// schema or a schema version.
    case foreign(applicationID: Int32)
    /// A PersistentLiveData store migrated by a newer library, whose migrations this one does not know
    /// all allow it to open the file (the README's compatibility promise): read-write, or read-only when
    /// `readOnlyMigration` names the first one marked ``MigrationCompatibility/readOnly``.
    case newer(found: Int, supported: Int, readOnlyMigration: String?)
    /// A PersistentLiveData store written by a newer library that this one must not open: a migration it
    /// does not know is marked ``MigrationCompatibility/incompatible``, or the file records no marks.
    case tooNew(found: Int, supported: Int)
  }

  /// What the content check found in a file it accepted.
  package struct Contents: Sendable, Hashable {
    /// The file's schema version (0 for an empty database).
    package let schemaVersion: Int
    /// Whether the database is new and empty (it becomes a store once migrated).
    package let isEmpty: Bool
    /// For a file a newer library migrated with a migration marked read-only for this one: its name
    /// (`0010_name`). Nothing may be written to the file then.
    package var readOnlyMigration: String?
  }

  // MARK: The file

  /// Checks what is at `path` before SQLite opens it, without following links and without writing.
  ///
  /// ```swift
  /// switch try StoreFileValidator.checkFile(at: path, access: .readWrite) {
  /// case .missing: createFile(at: path)
  /// case .empty, .database, .databaseCompletedByWAL: break
  /// }
  /// ```
  /// - Parameters:
  ///   - path: The database path.
  ///   - access: How the file will be read; ``Access/immutable`` refuses a truncated file even with a
  ///     `-wal` file next to it, since that file will not be read.
  ///   - acceptsTruncated: Give a truncated file to SQLite anyway (its missing pages then read as damage):
  ///     for reading what is left of it, never for a store.
  /// - Returns: The verdict for a path the caller may open (or create, when ``FileVerdict/missing``).
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError`` `isADirectory`, `symbolicLink` (the
  ///   path, its `-wal` or its `-shm`), `notADatabase`, `corrupt` (truncated), or `cannotOpen` when the path
  ///   cannot be examined.
  package static func checkFile(
    at path: String, access: Access, acceptsTruncated: Bool = false
  ) throws(PersistentLiveDataError) -> FileVerdict {
    let status: DatabaseFileStatus
    do {
      status = try DatabaseFile.classify(path: path)
    } catch {
      throw .cannotOpen(path: path, code: error.errno, reason: POSIX.message(for: error.errno))
    }
    switch status {
    case .symbolicLink: throw .symbolicLink(path: path)
    case .directory: throw .isADirectory(path: path)
    default: break
    }
    // SQLite opens the -wal and -shm with O_NOFOLLOW too, but reports a planted link only as "unable to
    // open database file": name it.
    for companion in [path + "-wal", path + "-shm"] where DatabaseFile.isSymbolicLink(path: companion) {
      throw .symbolicLink(path: companion)
    }
    switch status {
    case .missing:
      return .missing
    case .empty:
      return .empty
    case .sqlite(let header, _):
      return .database(header)
    case .truncated(let header, _) where access != .immutable && hasWriteAheadLog(path):
      return .databaseCompletedByWAL(header)
    case .truncated(let header, _) where acceptsTruncated:
      return .database(header)
    case .truncated(let header, let fileSize):
      var detail = "truncated: \(fileSize) bytes of \(header.expectedFileSize ?? 0)"
      if hasWriteAheadLog(path) {
        detail += ", and its -wal file cannot be read without write access to the folder"
      }
      throw .corrupt(path: path, detail: detail)
    case .notSQLite(let fileSize) where DatabaseFile.isInterruptedCreation(path: path, fileSize: fileSize):
      guard access == .readWrite else {
        throw .cannotOpen(
          path: path, code: SQLiteError.readOnlyRollbackCode,
          reason: "a power loss interrupted its creation before anything was stored in it, and SQLite must "
            + "replay its -journal file before it can be read, which takes write access; opening it once as "
            + "a store (PersistentStore(path:)) completes that recovery and leaves an empty store")
      }
      return .interruptedCreation
    case .notSQLite where access != .immutable && hasWriteAheadLog(path):
      return .pageOneInWAL
    case .notRegularFile, .notSQLite, .symbolicLink, .directory:
      throw .notADatabase(path: path)
    }
  }

  /// Whether a non-empty regular `-wal` file lies next to the database.
  ///
  /// ```swift
  /// let keepWAL = StoreFileValidator.hasWriteAheadLog(path)   // close without checkpoint if refused
  /// ```
  static func hasWriteAheadLog(_ path: String) -> Bool {
    guard case .success(let status) = POSIX.linkStatus(path + "-wal") else { return false }
    return status.kind == .regular && status.size > 0
  }

  // MARK: The contents

  /// Reads the identity of the database on `connection` (any mode) without changing it: the
  /// `application_id`, the schema version (``Migrator/schemaVersion(of:)``) and whether it holds any
  /// schema object. Reads through SQLite, so a header still in the `-wal` file counts.
  ///
  /// ```swift
  /// if case .foreign(let id) = try StoreFileValidator.identify(connection, supportedVersion: 1) { … }
  /// ```
  /// - Parameters:
  ///   - connection: An open connection to the database.
  ///   - supportedVersion: The newest schema version the caller knows.
  /// - Throws: ``SQLiteError`` (`SQLITE_NOTADB`, `SQLITE_CORRUPT`, I/O errors …).
  static func identify(_ connection: SQLiteConnection, supportedVersion: Int) throws -> Identity {
    // One snapshot for the three reads: another process may create the store (application id, version
    // and tables in one transaction) between them, and a mix of before and after reads as foreign.
    guard connection.isInTransaction else {
      return try connection.inTransaction(.deferred) {
        try identify(connection, supportedVersion: supportedVersion)
      }
    }
    let applicationID = Int32(truncatingIfNeeded: try connection.pragmaInt("application_id"))
    let version = try Migrator().schemaVersion(of: connection)
    if applicationID != Migrator.applicationID {
      // Only a brand-new database (no id, no version, no schema) may become a store.
      let objects = try connection.scalarInt64("SELECT count(*) FROM sqlite_schema") ?? 0
      guard applicationID == 0, version == 0, objects == 0 else {
        return .foreign(applicationID: applicationID)
      }
      return .empty
    }
    guard version <= supportedVersion else {
      return try newer(connection, found: version, supported: supportedVersion)
    }
    return .store(schemaVersion: version)
  }

  /// How a file of schema `found`, newer than `supported`, may be opened: by the worst of the marks the
  /// newer library recorded for the migrations this one does not know (``MigrationCompatibility``).
  /// A file without marks (a version before 0009), or missing the row of one of those migrations, is
  /// too new: nothing says what those migrations changed.
  private static func newer(_ connection: SQLiteConnection, found: Int, supported: Int) throws -> Identity {
    let tooNew = Identity.tooNew(found: found, supported: supported)
    guard try Migrator.recordsCompatibility(connection) else { return tooNew }
    let statement = try connection.prepare(
      "SELECT version, name, compatibility FROM pld_migrations WHERE version > ? ORDER BY version")
    try statement.bind(Int64(supported), at: 1)
    var unknown: [(version: Int, name: String, mark: MigrationCompatibility)] = []
    while try statement.step() {
      let mark = MigrationCompatibility(rawValue: statement.text(2)) ?? .incompatible
      unknown.append((Int(statement.int64(0)), statement.text(1), mark))
    }
    guard unknown.map(\.version) == Array((supported + 1)...found) else { return tooNew }
    switch MigrationCompatibility.worst(of: unknown.map(\.mark)) {
    case .readWrite:
      return .newer(found: found, supported: supported, readOnlyMigration: nil)
    case .readOnly:
      let first = unknown.first { $0.mark == .readOnly }
      return .newer(
        found: found, supported: supported,
        readOnlyMigration: first.map { Migration.fileStem(version: $0.version, name: $0.name) })
    case .incompatible:
      return tooNew
    }
  }

  /// Checks that the database on `connection` is an empty database or a store this library can read,
  /// then runs `PRAGMA quick_check` when `verifyingIntegrity` is set or `file` needs it. Writes nothing.
  ///
  /// ```swift
  /// let contents = try StoreFileValidator.checkContents(
  ///   of: connection, path: path, file: file, verifyingIntegrity: options.verifiesIntegrityOnOpen)
  /// ```
  /// - Parameters:
  ///   - connection: An open connection to `path` (read-write or read-only).
  ///   - path: The path errors name.
  ///   - file: What ``checkFile(at:access:)`` found.
  ///   - verifyingIntegrity: Whether to run `quick_check` (about 0.1 s per 50 MB).
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError`` `foreignDatabase`, `schemaTooNew` or
  ///   `corrupt` naming `path`; the ``SQLiteError`` of a read that failed (`SQLITE_NOTADB`, `SQLITE_CORRUPT`,
  ///   a `-shm` file that cannot be created …), for the caller to act on or map with
  ///   `StoreErrors.map(_:path:)`.
  static func checkContents(
    of connection: SQLiteConnection, path: String, file: FileVerdict, verifyingIntegrity: Bool
  ) throws -> Contents {
    let identity = try identify(connection, supportedVersion: Migrator.latestVersion)
    let contents: Contents
    switch identity {
    case .empty:
      contents = Contents(schemaVersion: 0, isEmpty: true)
    case .store(let schemaVersion):
      contents = Contents(schemaVersion: schemaVersion, isEmpty: false)
    case .newer(let found, _, let readOnlyMigration):
      contents = Contents(schemaVersion: found, isEmpty: false, readOnlyMigration: readOnlyMigration)
    case .foreign:
      throw PersistentLiveDataError.foreignDatabase(path: path)
    case .tooNew(let found, let supported):
      throw PersistentLiveDataError.schemaTooNew(path: path, found: found, supported: supported)
    }
    if verifyingIntegrity || file.needsIntegrityCheck {
      try checkIntegrity(of: connection, path: path)
    }
    return contents
  }

  /// Runs `PRAGMA quick_check` and refuses a damaged database.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` with SQLite's
  ///   first finding, or the ``SQLiteError`` that kept a page from being read (which says nothing about the
  ///   content).
  static func checkIntegrity(of connection: SQLiteConnection, path: String) throws {
    guard let result = try connection.scalarText("PRAGMA quick_check"), result != "ok" else { return }
    if let failure = readFailure(inQuickCheckResult: result) { throw failure }
    throw PersistentLiveDataError.corrupt(path: path, detail: result)
  }

  /// A page that quick_check could not read is reported as a result row, not as an error: "Page 3:
  /// unable to get the page. error code=266" (a b-tree page) or "failed to get page 28" (an overflow or
  /// freelist page whose number is valid; invalid numbers are reported as such). A read failure says
  /// nothing about the file's content: it is returned as the I/O error it was, not as damage.
  static func readFailure(inQuickCheckResult result: String) -> SQLiteError? {
    if let marker = result.range(of: "unable to get the page. error code=") {
      let digits = result[marker.upperBound...].prefix { $0.isASCII && $0.isNumber }
      guard let code = Int32(digits) else { return nil }
      let error = SQLiteError(extendedCode: code, message: result)
      return error.isCorrupt || error.isNotADatabase ? nil : error
    }
    if result.contains("failed to get page") {
      return SQLiteError(extendedCode: SQLiteError.ioErrorCode, message: result)
    }
    return nil
  }
}
