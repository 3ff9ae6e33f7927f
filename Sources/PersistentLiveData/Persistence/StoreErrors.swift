/// Turns storage-layer errors into ``PersistentLiveDataError``s that name the file.
enum StoreErrors {
  static func map(_ error: any Error, path: String) -> any Error {
    guard let error = error as? SQLiteError else { return error }
    return map(error, path: path)
  }

  static func map(_ error: SQLiteError, path: String) -> PersistentLiveDataError {
    if error.isFull { return .diskFull(path: path) }
    if error.isReadOnly || error.isWriteRefusedBySystem { return .readOnly(path: path) }
    if error.isBusy || error.isLocked { return .busy(path: path) }
    if error.isCorrupt { return .corrupt(path: path, detail: error.message) }
    if error.isNotADatabase { return .notADatabase(path: path) }
    if error.isSymlinkRefused { return .symbolicLink(path: path) }
    if error.isCantOpen { return .cannotOpen(path: path, code: error.extendedCode, reason: error.message) }
    if error.isIOError { return .ioError(path: path, code: error.extendedCode, reason: error.message) }
    return .sqlite(path: path, code: error.extendedCode, message: error.message)
  }
}
