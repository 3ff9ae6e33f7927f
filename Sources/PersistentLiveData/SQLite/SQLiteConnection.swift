internal import PLDSQLite3

/// One connection to an SQLite database: open, run scripts, prepare and cache statements, close.
///
/// **Not thread-safe; callers serialize.** The connection is opened with `SQLITE_OPEN_NOMUTEX`, so SQLite
/// itself does no locking: the owner (the store, pld-tool) must make sure one thread at a time uses the
/// connection and its statements, for whole transactions, not just single calls.
///
/// Every open uses `SQLITE_OPEN_NOFOLLOW` (a database file that is a symbolic link is refused with
/// `SQLITE_CANTOPEN_SYMLINK`), extended result codes, and never `SQLITE_OPEN_CREATE` unless asked: the
/// store creates the file itself with mode 0600 so that SQLite's -wal and -shm files inherit it. A file's
/// connection checks every b-tree page it reads (`PRAGMA cell_size_check = ON`).
///
/// ```swift
/// let connection = try SQLiteConnection(path: path, mode: .readWrite)
/// try connection.busyTimeout(5_000)
/// try connection.inTransaction(.immediate) {
///   try connection.execute("CREATE TABLE IF NOT EXISTS t(x)")
/// }
/// connection.close()
/// ```
package final class SQLiteConnection {
  /// How to open the file.
  package enum OpenMode: Sendable, Hashable {
    /// Read and write an existing file (`SQLITE_OPEN_READWRITE`).
    case readWrite
    /// Read only (`SQLITE_OPEN_READONLY`); the file must exist. A WAL database still needs its -shm file,
    /// so the directory must be writable unless another process has it open.
    case readOnly
    /// Read only as an immutable file (URI `file:…?immutable=1`): no locks and no -wal/-shm files, so it
    /// works on read-only media. SQLite: "SQLite assumes that the database file cannot be changed, even by
    /// a process with higher privilege" — use only when no one writes the file meanwhile.
    case readOnlyImmutable
    /// A private in-memory database; the path is ignored.
    case memory
  }

  /// Open/closed flag shared with the connection's statements (a statement of a closed connection
  /// refuses to step instead of touching a zombie handle).
  final class State {
    var isOpen = true
  }

  /// The path as given to `init` (`":memory:"` for ``OpenMode/memory``).
  package let path: String
  /// The mode the connection was opened with.
  package let mode: OpenMode
  /// The `sqlite3*`; `nil` after ``close()``.
  private(set) var handle: OpaquePointer?
  let state = State()
  /// Statements of ``cachedStatement(_:)``, keyed by SQL.
  private var statementCache: [String: SQLiteStatement] = [:]
  /// The same statements for ``SlottedSQL`` texts, by slot: found without hashing their text.
  private var slottedStatements: [SQLiteStatement?] = []

  /// Opens the database at `path`.
  ///
  /// SQLite's `SQLITE_OPEN_NOFOLLOW` refuses a symbolic link anywhere in the path ("The database filename
  /// is not allowed to contain a symbolic link"). The parent directory is therefore resolved with
  /// `realpath` first, so only a database *file* that is a link is refused; system directories that are
  /// links (`/var` → `/private/var` on Apple platforms, where every app container lives) keep working.
  ///
  /// A failed open closes the half-open handle SQLite returns.
  ///
  /// - Parameters:
  ///   - path: The database file. Ignored for ``OpenMode/memory``.
  ///   - mode: ``OpenMode/readWrite`` by default.
  ///   - create: Adds `SQLITE_OPEN_CREATE` (read-write only). Off by default: create the file yourself.
  /// - Throws: ``SQLiteError``; `SQLITE_CANTOPEN` for a missing file, a symbolic link or an empty path.
  ///   A garbage file opens fine: `SQLITE_NOTADB` comes with the first statement.
  package init(path: String, mode: OpenMode = .readWrite, create: Bool = false) throws {
    self.path = mode == .memory ? ":memory:" : path
    self.mode = mode
    // SQLite opens "" as a private temporary database, which is never what a caller with a path wants.
    guard mode == .memory || !path.isEmpty else {
      throw SQLiteError(extendedCode: SQLITE_CANTOPEN, message: "empty database path")
    }
    var flags = SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
    let filename: String
    switch mode {
    case .readWrite:
      flags |= SQLITE_OPEN_READWRITE
      if create { flags |= SQLITE_OPEN_CREATE }
      filename = Self.resolvingParentDirectory(of: path)
    case .readOnly:
      flags |= SQLITE_OPEN_READONLY
      filename = Self.resolvingParentDirectory(of: path)
    case .readOnlyImmutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
      filename = Self.immutableURI(for: Self.resolvingParentDirectory(of: path))
    case .memory:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY
      filename = ":memory:"
    }
    var db: OpaquePointer?
    let rc = sqlite3_open_v2(filename, &db, flags, nil)
    guard rc == SQLITE_OK, let db else {
      // "Whether or not an error occurs when it is opened, resources associated with the database
      // connection handle should be released by passing it to sqlite3_close() when it is no longer
      // required." (sqlite3_open_v2)
      let error = SQLiteError(rc == SQLITE_OK ? SQLITE_CANTOPEN : rc, db: db)
      if let db { sqlite3_close_v2(db) }
      throw error
    }
    handle = db
    sqlite3_extended_result_codes(db, 1)
    guard mode != .memory else { return }
    // "When enabled, SQLite does additional sanity checking on database b-tree pages as they are
    // initially read from disk. With cell size checking enabled, database corruption is detected earlier
    // and is less likely to 'spread'." (SQLite, PRAGMA cell_size_check). A damaged page is then reported
    // as SQLITE_CORRUPT by the read that meets it, before anything is built on what it holds. Setting the
    // flag reads nothing from the file.
    let checks = sqlite3_exec(db, "PRAGMA cell_size_check = ON", nil, nil, nil)
    guard checks == SQLITE_OK else {
      let error = SQLiteError(checks, db: db)
      sqlite3_close_v2(db)
      handle = nil
      throw error
    }
  }

  /// A new private in-memory database.
  ///
  /// - Throws: ``SQLiteError`` (out of memory only).
  package static func inMemory() throws -> SQLiteConnection {
    try SQLiteConnection(path: ":memory:", mode: .memory)
  }

  deinit {
    close()
  }

  /// Whether ``close()`` has not been called yet.
  var isOpen: Bool { handle != nil }

  /// Finalizes the cached statements and closes the connection. Idempotent.
  ///
  /// Uses `sqlite3_close_v2`: "If sqlite3_close_v2() is called with unfinalized prepared statements …
  /// then the database connection becomes an unusable 'zombie' which will automatically be deallocated
  /// when the last prepared statement is finalized". Statements still held elsewhere then throw
  /// `SQLITE_MISUSE` when stepped and free the zombie when they deinit.
  ///
  /// An open transaction is rolled back by SQLite.
  package func close() {
    guard let db = handle else { return }
    for statement in statementCache.values { statement.finalize() }
    statementCache.removeAll()
    slottedStatements.removeAll()
    state.isOpen = false
    handle = nil
    sqlite3_close_v2(db)
  }

  /// Closes the connection without the checkpoint SQLite runs when the last connection to a WAL database
  /// closes, so that the database file and its `-wal` are left exactly as they are (for a file that is
  /// being refused: copying the WAL into a damaged or foreign file and deleting it would destroy what a
  /// recovery tool needs). Idempotent.
  func closeWithoutCheckpoint() {
    if let handle { _ = pld_sqlite_set_no_checkpoint_on_close(handle, 1) }
    close()
  }

  /// The open handle, or `SQLITE_MISUSE` when closed.
  @inline(__always)
  func openHandle(sql: String? = nil) throws(SQLiteError) -> OpaquePointer {
    guard let handle else { throw SQLiteError.misuse("the connection is closed", sql: sql) }
    return handle
  }

  // MARK: Running SQL

  /// Runs a script of zero or more `;`-separated statements (`sqlite3_exec`), discarding rows.
  ///
  /// For migrations and configuration. Values should never be interpolated into `sql`: use
  /// ``prepare(_:)`` and bind them.
  ///
  /// - Throws: ``SQLiteError`` with the script as its SQL; statements before the failing one have run.
  package func execute(_ sql: String) throws {
    let db = try openHandle(sql: sql)
    var errorMessage: UnsafeMutablePointer<CChar>?
    let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
    defer { sqlite3_free(errorMessage) }
    guard rc == SQLITE_OK else {
      let message = errorMessage.map { String(cString: $0) } ?? SQLiteError.codeDescription(rc)
      var error = SQLiteError(extendedCode: sqlite3_extended_errcode(db), message: message, sql: sql)
      error.systemErrno = sqlite3_system_errno(db)
      throw error
    }
  }

  /// Runs one statement with bound values through the statement cache, discarding rows.
  ///
  /// ```swift
  /// try connection.run("DELETE FROM pld_values WHERE key = ? AND version < ?", [.text(key), .integer(v)])
  /// ```
  /// - Throws: ``SQLiteError`` with the SQL.
  package func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws {
    try cachedStatement(sql).run(bindings: bindings)
  }

  /// Prepares exactly one statement.
  ///
  /// - Parameter sql: One SQL statement; a trailing `;`, whitespace or comments are fine.
  /// - Returns: A statement the caller owns; it is finalized when released.
  /// - Throws: ``SQLiteError`` with the SQL (syntax error, unknown table, `SQLITE_NOTADB` …), or
  ///   `SQLITE_MISUSE` when `sql` holds no statement or more than one.
  package func prepare(_ sql: String) throws -> SQLiteStatement {
    try prepare(sql, persistent: false)
  }

  /// A statement prepared once per connection and kept until ``close()``; reset and cleared on each call.
  ///
  /// Reset the statement (or step it to the end) when done reading: until then it keeps its read
  /// transaction open. Don't hold it across a second `cachedStatement` call with the same SQL, which resets
  /// it under you.
  ///
  /// - Throws: as ``prepare(_:)``.
  func cachedStatement(_ sql: String) throws -> SQLiteStatement {
    if let statement = statementCache[sql] {
      statement.reset()
      statement.clearBindings()
      return statement
    }
    let statement = try prepare(sql, persistent: true)
    statementCache[sql] = statement
    return statement
  }

  /// ``cachedStatement(_:)-(String)`` for a statement a hot path runs many times a second: found by its
  /// slot, where a lookup by text hashes the whole text (a long query's hash took a noticeable part of a
  /// group commit's writes). The statement is the one cached for its text.
  ///
  /// ```swift
  /// static let insert = SlottedSQL("INSERT INTO t(x) VALUES (?)")
  /// let statement = try connection.cachedStatement(Self.insert)
  /// ```
  /// - Throws: as ``prepare(_:)``.
  func cachedStatement(_ slotted: SlottedSQL) throws -> SQLiteStatement {
    if slotted.slot < slottedStatements.count, let statement = slottedStatements[slotted.slot] {
      statement.reset()
      statement.clearBindings()
      return statement
    }
    let statement = try cachedStatement(slotted.sql)
    if slotted.slot >= slottedStatements.count {
      slottedStatements += repeatElement(nil, count: slotted.slot + 1 - slottedStatements.count)
    }
    slottedStatements[slotted.slot] = statement
    return statement
  }

  /// The number of statements in the cache.
  var cachedStatementCount: Int { statementCache.count }

  private func prepare(_ sql: String, persistent: Bool) throws -> SQLiteStatement {
    let db = try openHandle(sql: sql)
    // SQLITE_PREPARE_PERSISTENT: "a hint to the query planner that the prepared statement will be
    // retained for a long time and probably reused many times."
    let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
    return try sql.withCString { cSQL throws -> SQLiteStatement in
      var statement: OpaquePointer?
      var tail: UnsafePointer<CChar>?
      try SQLiteError.check(sqlite3_prepare_v3(db, cSQL, -1, flags, &statement, &tail), db: db, sql: sql)
      guard let statement else {
        throw SQLiteError.misuse("no SQL statement to prepare", sql: sql)
      }
      // sqlite3_prepare only compiles the first statement; a second one would be silently ignored.
      if let tail, tail.pointee != 0 {
        var extra: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, tail, -1, &extra, nil)
        if let extra { sqlite3_finalize(extra) }
        if rc != SQLITE_OK || extra != nil {
          sqlite3_finalize(statement)
          throw SQLiteError.misuse("prepare() takes one statement; use execute() for scripts", sql: sql)
        }
      }
      return SQLiteStatement(handle: statement, db: db, sql: sql, connectionState: state)
    }
  }

  // MARK: Path helpers

  /// `path` with its parent directory resolved by `realpath` (the last component untouched), or `path`
  /// unchanged when the directory cannot be resolved (SQLite then reports the problem).
  static func resolvingParentDirectory(of path: String) -> String {
    let name = POSIX.lastComponent(of: path)
    guard !name.isEmpty, let real = POSIX.realPath(POSIX.parentFolder(of: path)) else { return path }
    return (real.hasSuffix("/") ? real : real + "/") + name
  }

  /// `file:` URI with `immutable=1` for `path`, every byte outside the URI's unreserved set and `/`
  /// percent-encoded (SQLite decodes `%HH` escapes in URI filenames; `?` and `#` would end the path).
  static func immutableURI(for path: String) -> String {
    var uri = path.hasPrefix("/") ? "file://" : "file:"
    let hex = Array("0123456789ABCDEF")
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"), UInt8(ascii: "/"):
        uri.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        uri.append("%")
        uri.append(hex[Int(byte >> 4)])
        uri.append(hex[Int(byte & 0x0F)])
      }
    }
    return uri + "?immutable=1"
  }
}
