internal import PLDSQLite3

extension SQLiteConnection {
  /// How a transaction takes its locks.
  package enum TransactionKind: Sendable, Hashable {
    /// `BEGIN DEFERRED`: no lock until the first read or write. For read-only work.
    case deferred
    /// `BEGIN IMMEDIATE`: takes the write lock at once. For every write: a deferred transaction that
    /// later writes can fail with `SQLITE_BUSY` without the busy handler being called, while an immediate
    /// one waits for the lock up to the busy timeout.
    case immediate
    /// `BEGIN EXCLUSIVE`: in WAL mode the same as immediate.
    case exclusive

    var beginSQL: String {
      switch self {
      case .deferred: "BEGIN DEFERRED"
      case .immediate: "BEGIN IMMEDIATE"
      case .exclusive: "BEGIN EXCLUSIVE"
      }
    }
  }

  /// Whether a transaction is open (`sqlite3_get_autocommit` is 0). False when closed.
  var isInTransaction: Bool {
    guard let handle else { return false }
    return sqlite3_get_autocommit(handle) == 0
  }

  /// Starts a transaction.
  ///
  /// - Throws: ``SQLiteError``; `SQLITE_ERROR` "cannot start a transaction within a transaction" when one
  ///   is already open (SQLite has no nested `BEGIN`), `SQLITE_BUSY` when the write lock is not free.
  package func begin(_ kind: TransactionKind = .deferred) throws {
    if kind == .immediate {
      try cachedStatement(Self.beginImmediate).run()  // every write's
    } else {
      try cachedStatement(kind.beginSQL).run()
    }
  }

  private static let beginImmediate = SlottedSQL(TransactionKind.immediate.beginSQL)
  private static let commitSQL = SlottedSQL("COMMIT")

  /// Commits the open transaction.
  ///
  /// SQLite: "An attempt to execute COMMIT might also result in an SQLITE_BUSY return code … When COMMIT
  /// fails in this way, the transaction remains active and the COMMIT can be retried later". Call
  /// ``rollback()`` if you give up.
  ///
  /// - Throws: ``SQLiteError``; `SQLITE_ERROR` "cannot commit - no transaction is active" without one.
  package func commit() throws {
    try cachedStatement(Self.commitSQL).run()
  }

  /// Rolls back the open transaction, if any. Never throws.
  ///
  /// SQLite: "If certain kinds of errors occur within a transaction, the transaction may or may not be
  /// rolled back automatically" (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_BUSY`, `SQLITE_NOMEM`). So rolling
  /// back a transaction that is already gone is not an error; a `ROLLBACK` that fails leaves nothing a
  /// caller could do better, and SQLite rolls back when the connection closes.
  package func rollback() {
    guard isInTransaction else { return }
    // Not the cache: a rollback must work even when preparing a new statement would fail (out of memory).
    if let db = handle { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
  }

  /// Runs `body` in a transaction: commits when it returns, rolls back when it (or the commit) throws.
  ///
  /// ```swift
  /// let version = try connection.inTransaction(.immediate) {
  ///   let next = (try connection.scalarInt64("SELECT max(version) FROM pld_values") ?? 0) + 1
  ///   // insert …
  ///   return next
  /// }
  /// ```
  /// - Parameters:
  ///   - kind: ``TransactionKind/deferred`` by default; use ``TransactionKind/immediate`` to write.
  ///   - body: The work; may throw to roll back.
  /// - Returns: What `body` returns.
  /// - Throws: The error of `begin`, `body` or `commit`. When `begin` fails (e.g. nested use) nothing is
  ///   rolled back: an outer transaction stays the caller's to finish.
  package func inTransaction<Result>(
    _ kind: TransactionKind = .deferred, _ body: () throws -> Result
  ) throws -> Result {
    try begin(kind)
    do {
      let result = try body()
      try commit()
      return result
    } catch {
      rollback()
      throw error
    }
  }
}
