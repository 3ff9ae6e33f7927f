internal import PLDSQLite3

extension SQLiteConnection {
  /// Copies this connection's main database, page by page, into the main database of `destination`
  /// (SQLite's online backup API, in one step: a consistent snapshot).
  ///
  /// For an in-memory database, whose connection is the only way to it: `VACUUM INTO` from such a
  /// connection opens its target in memory too (`SQLITE_OPEN_MEMORY` is inherited) and writes no file.
  ///
  /// ```swift
  /// let file = try SQLiteConnection(path: "copy.db", mode: .readWrite, create: true)
  /// try memory.copyDatabase(into: file)
  /// ```
  /// - Throws: ``SQLiteError`` of the destination (full disk, read-only file, …) or for a closed
  ///   connection.
  func copyDatabase(into destination: SQLiteConnection) throws {
    guard let source = handle, let target = destination.handle else {
      throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "the connection is closed")
    }
    guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
      throw SQLiteError(sqlite3_extended_errcode(target), db: target)
    }
    let stepped = sqlite3_backup_step(backup, -1)
    // Finishing releases the backup whatever happened; its result repeats a failure of the step.
    let finished = sqlite3_backup_finish(backup)
    guard stepped == SQLITE_DONE else { throw SQLiteError(stepped, db: target) }
    guard finished == SQLITE_OK else { throw SQLiteError(finished, db: target) }
  }
}
