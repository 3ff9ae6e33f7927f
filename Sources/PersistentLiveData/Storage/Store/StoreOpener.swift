import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Creates or validates a store file and opens its connection.
///
/// Validation comes before anything is written: a file that is not ours — not SQLite, another
/// application's database, truncated, damaged, or of a newer schema — is refused with a distinct
/// ``PersistentLiveDataError`` and left byte-for-byte as it was. Only then does the store switch the
/// file to WAL, set `synchronous`, and apply migrations.
struct StoreOpener {
  let path: String?
  let options: StoreOptions

  struct Opened {
    let connection: SQLiteConnection
    let registration: OpenFileRegistration?
    let latestRows: [String: StoredRow]
    /// The migrations this open applied (empty for an up-to-date file).
    let appliedMigrations: [Migration]
  }

  func openDatabase() throws -> Opened {
    guard let path else {
      let connection = try map { try SQLiteConnection(path: ":memory:", mode: .memory) }
      let applied = try configure(connection, path: ":memory:")
      return Opened(connection: connection, registration: nil, latestRows: [:], appliedMigrations: applied)
    }
    try prepareFile(at: path)
    let registration = try OpenFileRegistration(path: path)
    let hadWriteAheadLog = Self.hasWriteAheadLog(path)
    let connection = try map(path: path) { try SQLiteConnection(path: path, mode: .readWrite) }
    do {
      try validateContents(of: connection, path: path)
      let applied = try configure(connection, path: path)
      let rows = try map(path: path) { try Self.readLatestRows(connection) }
      return Opened(
        connection: connection, registration: registration, latestRows: rows, appliedMigrations: applied)
    } catch {
      // A refused file is left byte for byte, its WAL included: no checkpoint on this close. (Without a
      // WAL to begin with, the ordinary close removes the empty one this open created.)
      if hadWriteAheadLog {
        connection.closeWithoutCheckpoint()
      } else {
        connection.close()
      }
      throw error
    }
  }

  /// Refuses symbolic links and files that are not SQLite; creates a missing file (0600) and its
  /// missing folders (0700).
  private func prepareFile(at path: String) throws {
    // SQLite opens the -wal and -shm with O_NOFOLLOW too, but reports a planted link only as "unable to
    // open database file": name it.
    for companion in [path + "-wal", path + "-shm"] where DatabaseFile.isSymbolicLink(path: companion) {
      throw PersistentLiveDataError.symbolicLink(path: companion)
    }
    let status: DatabaseFileStatus
    do {
      status = try DatabaseFile.classify(path: path)
    } catch {
      throw PersistentLiveDataError.cannotOpen(path: path, code: error.errno, reason: error.description)
    }
    switch status {
    case .missing:
      try createFile(at: path)
    case .empty, .sqlite:
      break
    case .symbolicLink:
      throw PersistentLiveDataError.symbolicLink(path: path)
    case .notRegularFile, .notSQLite:
      throw PersistentLiveDataError.notADatabase(path: path)
    case .truncated where Self.hasWriteAheadLog(path):
      // Not damage: a checkpoint copies pages in increasing order, page 1 (holding the new size)
      // first, so a crash or power loss in the middle of one leaves a file shorter than its header
      // says, with every missing page still in the WAL. SQLite's recovery replays it; quick_check in
      // `validateContents` refuses the file if pages are really missing.
      break
    case .truncated(let header, let fileSize):
      let expected = header.expectedFileSize ?? 0
      throw PersistentLiveDataError.corrupt(
        path: path, detail: "truncated: \(fileSize) bytes of \(expected)")
    }
  }

  /// Whether a non-empty `-wal` file lies next to the database.
  static func hasWriteAheadLog(_ path: String) -> Bool {
    var info = stat()
    return lstat(path + "-wal", &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_size > 0
  }

  private func createFile(at path: String) throws {
    let folder = (path as NSString).deletingLastPathComponent
    if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
      do {
        try FileManager.default.createDirectory(
          atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      } catch {
        throw PersistentLiveDataError.cannotOpen(
          path: path, code: Int32(EACCES), reason: "cannot create folder \(folder)")
      }
    }
    let descriptor = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
    if descriptor < 0 {
      let code = errno
      // Created by someone else in the meantime: validate it like any existing file.
      if code == EEXIST { return try prepareFile(at: path) }
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: code, reason: String(cString: strerror(code)))
    }
    close(descriptor)
  }

  /// Reads the identity of the file without changing it.
  private func validateContents(of connection: SQLiteConnection, path: String) throws {
    let (applicationID, schemaVersion, tables) = try map(path: path) {
      (
        try connection.pragmaInt("application_id"),
        try connection.pragmaInt("user_version"),
        try Self.userTables(connection)
      )
    }
    if applicationID == 0 && tables.isEmpty && schemaVersion == 0 {
      return  // a new, empty database
    }
    guard applicationID == Int64(Migrator.applicationID) else {
      throw PersistentLiveDataError.foreignDatabase(path: path)
    }
    if schemaVersion > Int64(Migrator.latestVersion) {
      throw PersistentLiveDataError.schemaTooNew(
        path: path, found: Int(schemaVersion), supported: Migrator.latestVersion)
    }
    if options.verifiesIntegrityOnOpen {
      let result = try map(path: path) { try connection.scalarText("PRAGMA quick_check") }
      if let result, result != "ok" {
        if let failure = Self.readFailure(inQuickCheckResult: result) {
          throw StoreErrors.map(failure, path: path)
        }
        throw PersistentLiveDataError.corrupt(path: path, detail: result)
      }
    }
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

  /// WAL, `synchronous` from the durability option, the busy timeout, then migrations.
  private func configure(_ connection: SQLiteConnection, path: String) throws -> [Migration] {
    try map(path: path) {
      try connection.busyTimeout(options.busyTimeoutMilliseconds)
      if path != ":memory:" {
        let mode = try connection.setPragma("journal_mode", "WAL")
        if mode?.lowercased() != "wal" {
          throw PersistentLiveDataError.cannotOpen(
            path: path, code: 0, reason: "the file cannot be switched to WAL mode")
        }
      }
      _ = try connection.setPragma("synchronous", options.durability == .full ? "FULL" : "NORMAL")
      if options.secureDelete {
        // "When secure_delete is on, SQLite overwrites deleted content with zeros." (SQLite, PRAGMA docs)
        _ = try connection.setPragma("secure_delete", "ON")
      }
    }
    do {
      return try Migrator().migrate(connection)
    } catch let error as MigrationError {
      switch error {
      case .schemaTooNew(let found, let supported):
        throw PersistentLiveDataError.schemaTooNew(path: path, found: found, supported: supported)
      default:
        throw PersistentLiveDataError.sqlite(path: path, code: 0, message: "\(error)")
      }
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }

  private func map<Result>(path: String = ":memory:", _ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }

  static func userTables(_ connection: SQLiteConnection) throws -> [String] {
    let statement = try connection.prepare(SQL.userTables)
    var names: [String] = []
    while try statement.step() { names.append(statement.text(0)) }
    return names
  }

  /// Files up to this size are read by one scan; larger ones (long histories) by a skip-scan.
  static let scanLimitBytes: Int64 = 16 << 20

  static func readLatestRows(_ connection: SQLiteConnection) throws -> [String: StoredRow] {
    let size = try connection.pragmaInt("page_count") * connection.pragmaInt("page_size")
    let statement = try connection.prepare(
      size <= scanLimitBytes ? SQL.latestRowsByScan : SQL.latestRowsBySkipScan)
    var rows: [String: StoredRow] = [:]
    while try statement.step() {
      let key = statement.text(0)
      // A key another client wrote as bytes that are not UTF-8 reads back repaired (U+FFFD), a different
      // key: preloading it under that name would alias the two. It stays on disk, untouched.
      guard statement.withUnsafeBytes(ofColumn: 0, { $0.elementsEqual(key.utf8) }) else { continue }
      rows[key] = StoredRow(
        key: key, version: statement.int64(1), writtenAtMilliseconds: statement.int64(2),
        payload: statement.data(3))
    }
    return rows
  }
}
