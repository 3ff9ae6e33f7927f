internal import PLDSQLite3

extension SQLiteConnection {
  /// Result of ``SQLiteConnection/walCheckpoint(_:)``.
  package struct CheckpointResult: Sendable, Hashable {
    /// Frames in the WAL file (-1 when the database is not in WAL mode).
    package let logFrames: Int
    /// Frames copied back into the database (-1 when not in WAL mode).
    package let checkpointedFrames: Int
  }

  /// The `sqlite3_wal_checkpoint_v2` modes.
  package enum CheckpointMode: Sendable, Hashable {
    /// Copies what it can without waiting for readers or writers.
    case passive
    /// Waits for the writer lock and for readers, then copies everything.
    case full
    /// As ``full``, then waits until the next writer can restart the WAL from the beginning.
    case restart
    /// As ``restart``, then truncates the WAL file to zero bytes.
    case truncate

    var cValue: Int32 {
      switch self {
      case .passive: SQLITE_CHECKPOINT_PASSIVE
      case .full: SQLITE_CHECKPOINT_FULL
      case .restart: SQLITE_CHECKPOINT_RESTART
      case .truncate: SQLITE_CHECKPOINT_TRUNCATE
      }
    }
  }

  /// Sets how long a locked database is retried before `SQLITE_BUSY` (`sqlite3_busy_timeout`).
  ///
  /// - Parameter milliseconds: 0 or less turns the busy handler off.
  /// - Throws: ``SQLiteError`` when the connection is closed.
  package func busyTimeout(_ milliseconds: Int) throws {
    let db = try openHandle()
    try SQLiteError.check(sqlite3_busy_timeout(db, Int32(clamping: milliseconds)), db: db)
  }

  /// Rows changed by the most recent `INSERT`/`UPDATE`/`DELETE` (`sqlite3_changes64`); 0 when closed.
  package var changes: Int {
    guard let handle else { return 0 }
    return Int(sqlite3_changes64(handle))
  }

  /// Rows changed since the connection opened (`sqlite3_total_changes64`); 0 when closed.
  var totalChanges: Int {
    guard let handle else { return 0 }
    return Int(sqlite3_total_changes64(handle))
  }

  /// The rowid of the most recent successful `INSERT` into a rowid table; settable
  /// (`sqlite3_set_last_insert_rowid`): SQL reads it as `last_insert_rowid()`, a value of this connection
  /// alone, which an `INSERT` into a `WITHOUT ROWID` table leaves as it is.
  var lastInsertRowID: Int64 {
    get {
      guard let handle else { return 0 }
      return sqlite3_last_insert_rowid(handle)
    }
    set {
      guard let handle else { return }
      sqlite3_set_last_insert_rowid(handle, newValue)
    }
  }

  /// Whether the main database is read-only: a read-only mode, or a file SQLite could only open for reading.
  package var isReadOnly: Bool {
    guard let handle else { return true }
    return sqlite3_db_readonly(handle, "main") == 1
  }

  /// `PRAGMA data_version`: changes when *another* connection commits to the file.
  ///
  /// SQLite: "The integer values returned by two invocations of "PRAGMA data_version" from the same
  /// connection will be different if changes were committed to the database by any other connection in
  /// the interim. The "PRAGMA data_version" value is unchanged for changes committed on the same database
  /// connection." Costs about 5 µs here (cached statement).
  ///
  /// - Throws: ``SQLiteError``.
  package func dataVersion() throws -> Int64 {
    try scalarInt64("PRAGMA data_version") ?? 0
  }

  /// The main database's data version as its pager counts it (`SQLITE_FCNTL_DATA_VERSION`), or nil when
  /// the connection is closed or SQLite refuses: it moves with every commit of this connection, and with
  /// another connection's commit as soon as this one begins its next transaction. A function call, no
  /// statement: cheaper than ``dataVersion()``, which moves only for other connections.
  var pagerDataVersion: UInt32? {
    guard let handle else { return nil }
    var version: UInt32 = 0
    guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else {
      return nil
    }
    return version
  }

  /// Runs a WAL checkpoint on the main database (`sqlite3_wal_checkpoint_v2`).
  ///
  /// - Parameter mode: ``CheckpointMode/passive`` by default.
  /// - Returns: The WAL's frame counts after the checkpoint.
  /// - Throws: ``SQLiteError``; `SQLITE_BUSY` when a full/restart/truncate checkpoint could not finish
  ///   ("the checkpoint operation proceeds … in the same way as SQLITE_CHECKPOINT_PASSIVE … and the error
  ///   code SQLITE_BUSY is returned to the caller").
  @discardableResult
  package func walCheckpoint(_ mode: CheckpointMode = .passive) throws -> CheckpointResult {
    let db = try openHandle()
    var logFrames: Int32 = -1
    var checkpointed: Int32 = -1
    try SQLiteError.check(
      sqlite3_wal_checkpoint_v2(db, "main", mode.cValue, &logFrames, &checkpointed), db: db)
    return CheckpointResult(logFrames: Int(logFrames), checkpointedFrames: Int(checkpointed))
  }

  /// Syncs the write-ahead log to stable storage, as a commit under `synchronous=FULL` would, through
  /// the connection's own VFS file object (`SQLITE_FCNTL_JOURNAL_POINTER`, then its `xSync`): a wrapping
  /// VFS sees the sync like any of SQLite's. Does nothing before the connection has opened its WAL.
  ///
  /// ```swift
  /// try connection.syncWriteAheadLog()   // every commit so far survives a power loss
  /// ```
  /// - Throws: ``SQLiteError`` (`SQLITE_IOERR_FSYNC`…).
  func syncWriteAheadLog() throws {
    let db = try openHandle()
    var file: UnsafeMutablePointer<sqlite3_file>?
    try SQLiteError.check(sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file), db: db)
    guard let file, let methods = file.pointee.pMethods, let sync = methods.pointee.xSync else { return }
    try SQLiteError.check(sync(file, SQLITE_SYNC_NORMAL), db: db)
  }

  // MARK: Pragmas

  /// Reads an integer pragma, e.g. `try connection.pragmaInt("user_version")`.
  ///
  /// - Parameter name: A pragma name, optionally schema-qualified (`main.page_size`).
  /// - Throws: ``SQLiteError``; `SQLITE_MISUSE` for a name that is not an identifier.
  func pragmaInt(_ name: String) throws -> Int64 {
    try scalarInt64("PRAGMA \(Self.checkedPragmaName(name))") ?? 0
  }

  /// Reads a text pragma, e.g. `try connection.pragmaText("journal_mode")` → `"wal"`.
  ///
  /// - Throws: ``SQLiteError``; `SQLITE_MISUSE` for a name that is not an identifier.
  func pragmaText(_ name: String) throws -> String {
    try scalarText("PRAGMA \(Self.checkedPragmaName(name))") ?? ""
  }

  /// Sets a pragma and returns the first column of the first row it answers, if any
  /// (`setPragma("journal_mode", "WAL")` → `"wal"`).
  ///
  /// - Parameters:
  ///   - name: A pragma name, optionally schema-qualified.
  ///   - value: An integer, or a keyword made of letters, digits, `_` and `-`.
  /// - Throws: ``SQLiteError``; `SQLITE_MISUSE` for a name or value outside those characters.
  @discardableResult
  func setPragma(_ name: String, _ value: String) throws -> String? {
    guard !value.isEmpty, value.utf8.allSatisfy({ Self.isIdentifierByte($0) || $0 == UInt8(ascii: "-") })
    else {
      throw SQLiteError.misuse("invalid pragma value", sql: "PRAGMA \(name)")
    }
    return try scalarText("PRAGMA \(Self.checkedPragmaName(name)) = \(value)")
  }

  /// Sets an integer pragma (`setPragma("user_version", 3)`).
  ///
  /// - Throws: ``SQLiteError``.
  @discardableResult
  func setPragma(_ name: String, _ value: Int64) throws -> String? {
    try scalarText("PRAGMA \(Self.checkedPragmaName(name)) = \(value)")
  }

  // MARK: Scalars

  /// The first column of the first row as an integer; `nil` for no row or NULL.
  ///
  /// Uses a cached statement and resets it before returning, so no read transaction stays open.
  ///
  /// - Parameters:
  ///   - sql: One statement.
  ///   - bindings: Values for parameters 1…n.
  /// - Throws: ``SQLiteError``.
  package func scalarInt64(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int64? {
    let statement = try cachedStatement(sql)
    defer { statement.reset() }
    try statement.bind(bindings)
    guard try statement.step(), !statement.isNull(0) else { return nil }
    return statement.int64(0)
  }

  /// The first column of the first row as text; `nil` for no row or NULL.
  ///
  /// - Parameters:
  ///   - sql: One statement.
  ///   - bindings: Values for parameters 1…n.
  /// - Throws: ``SQLiteError``.
  func scalarText(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> String? {
    let statement = try cachedStatement(sql)
    defer { statement.reset() }
    try statement.bind(bindings)
    guard try statement.step(), !statement.isNull(0) else { return nil }
    return statement.text(0)
  }

  // MARK: Helpers

  static func checkedPragmaName(_ name: String) throws(SQLiteError) -> String {
    let bytes = Array(name.utf8)
    let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    let valid =
      (1...2).contains(parts.count)
      && parts.allSatisfy { part in
        guard let first = part.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
          return false
        }
        return part.allSatisfy(isIdentifierByte)
      }
    guard valid else { throw SQLiteError.misuse("invalid pragma name", sql: "PRAGMA \(name)") }
    return name
  }

  static func isIdentifierByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
      true
    default:
      false
    }
  }
}
