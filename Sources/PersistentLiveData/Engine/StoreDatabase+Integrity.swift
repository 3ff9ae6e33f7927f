extension StoreDatabase {
  /// Runs `PRAGMA quick_check` on the file: from a read-only connection of its own for a file this store
  /// writes (a reader in WAL mode blocks no writer), on the store's connection otherwise (an in-memory
  /// database, or a read-only store, which may have opened its file immutably).
  func verifyIntegrity() throws {
    try ensureOpen()
    guard let path, !options.readOnly else {
      try withConnection { connection, _ in
        try StoreFileValidator.checkIntegrity(of: connection, path: displayPath)
      }
      return
    }
    do {
      // A read-only connection never checkpoints or resets the WAL: it may sit beside the writer.
      let connection = try SQLiteConnection(path: path, mode: .readOnly)
      defer { connection.close() }
      try connection.busyTimeout(options.busyTimeoutMilliseconds)
      try StoreFileValidator.checkIntegrity(of: connection, path: path)
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }
}
