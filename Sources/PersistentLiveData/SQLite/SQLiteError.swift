internal import PLDSQLite3

/// An error reported by SQLite: the result code, SQLite's own message and the SQL that failed.
///
/// Every SQLite call of the store (`SQLite/`, `Engine/`, `Migrations/`, `Inspection/`) that returns
/// something other than `SQLITE_OK` (or the expected `SQLITE_ROW`/`SQLITE_DONE` of a step) turns into
/// this error at the call site, through ``SQLiteError/check(_:db:sql:)``. Connections run with extended
/// result codes on, so ``extendedCode`` carries the detail (`SQLITE_CONSTRAINT_PRIMARYKEY`,
/// `SQLITE_CANTOPEN_SYMLINK`, …) and ``code`` the primary code the predicates test.
///
/// ```swift
/// do {
///   try connection.execute("INSERT INTO t VALUES (1)")
/// } catch let error as SQLiteError where error.isReadOnly {
///   // the file or the connection is read-only
/// }
/// ```
package struct SQLiteError: Error, CustomStringConvertible, Sendable, Hashable {
  /// The extended result code, e.g. 1555 (`SQLITE_CONSTRAINT_PRIMARYKEY`).
  let extendedCode: Int32
  /// `sqlite3_errmsg` at the time of the failure, or a message of this package for misuse it detects itself.
  package let message: String
  /// The SQL being prepared or run, when there was one.
  package let sql: String?
  /// The operating system's `errno` behind an I/O or open failure (`sqlite3_system_errno`), or 0.
  var systemErrno: Int32 = 0

  /// The primary result code (the low 8 bits of ``extendedCode``), e.g. 19 (`SQLITE_CONSTRAINT`).
  package var code: Int32 { extendedCode & 0xFF }

  /// Creates an error from its parts.
  ///
  /// - Parameters:
  ///   - extendedCode: An extended (or primary) SQLite result code.
  ///   - message: What went wrong.
  ///   - sql: The statement involved, if any.
  package init(extendedCode: Int32, message: String, sql: String? = nil) {
    self.extendedCode = extendedCode
    self.message = message
    self.sql = sql
  }

  /// `"SQLite error 19/1555 (constraint failed): UNIQUE constraint failed: t.k — in: INSERT INTO t …"`.
  ///
  /// The SQL is the statement text only; values are always bound, so no payload appears here.
  package var description: String {
    var text = "SQLite error \(code)"
    if extendedCode != code { text += "/\(extendedCode)" }
    text += " (\(Self.codeDescription(extendedCode))): \(message)"
    if let sql { text += " — in: \(sql)" }
    return text
  }

  /// SQLite's English description of a result code (`sqlite3_errstr`).
  static func codeDescription(_ code: Int32) -> String {
    guard let text = sqlite3_errstr(code) else { return "unknown error" }
    return String(cString: text)
  }
}

// MARK: - Predicates by primary code

extension SQLiteError {
  /// `SQLITE_BUSY` (5): another connection holds a lock and the busy timeout ran out.
  var isBusy: Bool { code == SQLITE_BUSY }
  /// `SQLITE_LOCKED` (6): a conflict inside this connection (e.g. dropping a table being read).
  var isLocked: Bool { code == SQLITE_LOCKED }
  /// `SQLITE_FULL` (13): the disk or the file system quota is full.
  var isFull: Bool { code == SQLITE_FULL }
  /// `SQLITE_READONLY` (8): a write on a read-only connection, file or directory.
  package var isReadOnly: Bool { code == SQLITE_READONLY }
  /// `SQLITE_CORRUPT` (11): the file's content is malformed.
  var isCorrupt: Bool { code == SQLITE_CORRUPT }
  /// `SQLITE_NOTADB` (26): the file is not an SQLite database.
  var isNotADatabase: Bool { code == SQLITE_NOTADB }
  /// `SQLITE_CANTOPEN` (14): the file is missing, unreachable, or a symbolic link (`SQLITE_OPEN_NOFOLLOW`).
  var isCantOpen: Bool { code == SQLITE_CANTOPEN }
  /// `SQLITE_IOERR` (10): the operating system reported an I/O error.
  var isIOError: Bool { code == SQLITE_IOERR }

  /// An I/O or open failure because the file system refused to write: `EPERM` (an immutable file),
  /// `EACCES` or `EROFS` (a read-only mount).
  var isWriteRefusedBySystem: Bool {
    (code == SQLITE_IOERR || code == SQLITE_CANTOPEN)
      && [POSIX.ErrorCode.notPermitted, POSIX.ErrorCode.accessDenied, POSIX.ErrorCode.readOnlyFileSystem]
        .contains(systemErrno)
  }
  /// `SQLITE_CONSTRAINT` (19): a `PRIMARY KEY`, `UNIQUE`, `NOT NULL` or `CHECK` constraint failed.
  var isConstraint: Bool { code == SQLITE_CONSTRAINT }
  /// `SQLITE_CANTOPEN_SYMLINK`: the path names a symbolic link and the connection refuses to follow it.
  var isSymlinkRefused: Bool { extendedCode == Self.cantOpenSymlink }

  /// `SQLITE_IOERR` (10), for errors built outside this folder (which does not import the C module).
  static let ioErrorCode: Int32 = SQLITE_IOERR

  /// `SQLITE_FULL` (13), for errors built outside this folder.
  static let fullCode: Int32 = SQLITE_FULL

  /// `SQLITE_READONLY_ROLLBACK` (776): a read-only connection found a hot rollback journal it cannot
  /// replay. The header defines it as `(SQLITE_READONLY | (3<<8))`, a macro Swift does not import.
  static let readOnlyRollbackCode: Int32 = SQLITE_READONLY | (3 << 8)

  /// `SQLITE_CANTOPEN_SYMLINK` (1550). The header defines it as `(SQLITE_CANTOPEN | (6<<8))`, a macro
  /// Swift does not import.
  static let cantOpenSymlink: Int32 = SQLITE_CANTOPEN | (6 << 8)
}

// MARK: - The one helper at the C boundary

extension SQLiteError {
  /// Throws unless `resultCode` is `SQLITE_OK`; the error carries the code, `sqlite3_errmsg(db)` and `sql`.
  ///
  /// - Parameters:
  ///   - resultCode: The value an `sqlite3_*` function returned.
  ///   - db: The connection the call was made on, for its message; `nil` when there is none.
  ///   - sql: The statement involved, if any.
  /// - Throws: ``SQLiteError`` for any code other than `SQLITE_OK`.
  @inline(__always)
  static func check(_ resultCode: Int32, db: OpaquePointer?, sql: String? = nil) throws(SQLiteError) {
    if resultCode == SQLITE_OK { return }
    throw SQLiteError(resultCode, db: db, sql: sql)
  }

  /// An error for `resultCode`, with the connection's current message.
  ///
  /// `sqlite3_errmsg` describes the most recent failed call on the connection, which is the call that
  /// returned `resultCode` because callers serialize access to a connection.
  init(_ resultCode: Int32, db: OpaquePointer?, sql: String? = nil) {
    let message: String
    if let db, let text = sqlite3_errmsg(db) {
      message = String(cString: text)
    } else {
      message = Self.codeDescription(resultCode)
    }
    self.init(extendedCode: resultCode, message: message, sql: sql)
    if let db { systemErrno = sqlite3_system_errno(db) }
  }

  /// A misuse this package detects itself (closed connection, several statements given to `prepare`, …).
  static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
    SQLiteError(extendedCode: SQLITE_MISUSE, message: message, sql: sql)
  }
}
