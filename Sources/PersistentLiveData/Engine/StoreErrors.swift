/// Turns storage-layer errors into ``/PersistentLiveDataBackend/PersistentLiveDataError``s that name the
/// file.
enum StoreErrors {
  /// Whether the file system refuses writes to the database, its WAL or its folder (an immutable file, a
  /// read-only mount). SQLite reports those as I/O errors; `sqlite3_system_errno` does not keep the
  /// `errno` of a failed write in 3.40, so the files are asked directly.
  static func isWriteRefused(_ path: String) -> Bool {
    guard path != ":memory:" else { return false }
    let candidates = [path, path + "-wal", POSIX.parentFolder(of: path)]
    return candidates.contains { candidate in
      POSIX.exists(candidate) && !POSIX.isWritable(candidate)
    }
  }

  static func map(_ error: any Error, path: String) -> any Error {
    guard let error = error as? SQLiteError else { return error }
    return map(error, path: path)
  }

  static func map(_ error: SQLiteError, path: String) -> PersistentLiveDataError {
    // SQLite reports some writes that found no room as I/O errors (growing the -shm file on open:
    // SQLITE_IOERR_SHMSIZE); the errno says what happened.
    let noRoom = [POSIX.ErrorCode.noSpace, POSIX.ErrorCode.quotaExceeded]
    if error.isFull || (error.isIOError && noRoom.contains(error.systemErrno)) {
      return .diskFull(path: path)
    }
    if error.isReadOnly || error.isWriteRefusedBySystem { return .readOnly(path: path) }
    if error.isIOError || error.isCantOpen, isWriteRefused(path) { return .readOnly(path: path) }
    if error.isBusy || error.isLocked { return .busy(path: path) }
    if error.isCorrupt {
      return .corrupt(path: path, detail: "\(error.message) (SQLite code \(error.extendedCode))")
    }
    if error.isNotADatabase { return .notADatabase(path: path) }
    if error.isSymlinkRefused { return .symbolicLink(path: path) }
    if error.isCantOpen { return .cannotOpen(path: path, code: error.extendedCode, reason: error.message) }
    if error.isIOError { return .ioError(path: path, code: error.extendedCode, reason: error.message) }
    return .sqlite(path: path, code: error.extendedCode, message: error.message)
  }
}
