import PersistentLiveData

/// Opening a store the way each kind of command needs it.
enum StoreAccess {
  /// A read-only inspector: never creates, migrates or writes the file.
  ///
  /// - Parameter salvaging: Open a truncated file as well, to read what is left of it (`verify` and the
  ///   `--salvage` reads); other commands refuse it.
  /// - Throws: ``InspectionError`` or ``PersistentLiveDataError`` naming the file.
  static func inspector(_ path: String, salvaging: Bool = false) throws -> StoreInspector {
    try StoreInspector(path: path, salvaging: salvaging)
  }

  /// What a write command does when nothing is at the database path.
  enum MissingFile {
    /// Create a new, empty store, and the folders leading to it (`set --create`, `import --create`).
    case create
    /// Fail with ``InspectionError/missingFile(path:)``, as read commands do (`rollback`, `prune`, which
    /// need stored versions).
    case fail
    /// Fail with a ``CommandError`` that names the path and `--create` (`set`, `import` without it).
    case failSuggestingCreate
  }

  /// A store for writing, through the library's own write path.
  ///
  /// Without ``MissingFile/create``, a missing file is refused before the library opens anything, so
  /// that a mistyped path creates no file and no folder.
  ///
  /// - Parameters:
  ///   - path: The database file.
  ///   - missing: What to do when no file is at `path`.
  /// - Throws: ``CommandError`` or ``InspectionError/missingFile(path:)`` for a missing file (see
  ///   ``MissingFile``), or a ``PersistentLiveDataError`` naming the file (`notADatabase`,
  ///   `isADirectory`, `foreignDatabase`, `schemaTooNew`, `readOnly`, `busy`, …).
  static func store(_ path: String, ifMissing missing: MissingFile) throws -> PersistentStore {
    try checkPresence(path, ifMissing: missing)
    // The store checks the file again, with the same validator, when it opens it.
    return try PersistentStore(path: path)
  }

  /// Throws what ``store(_:ifMissing:)`` throws for a missing file, without opening anything: a write
  /// command calls it before it reads its input, so that a mistyped path fails first.
  static func checkPresence(_ path: String, ifMissing missing: MissingFile) throws {
    guard missing != .create, try StoreFileValidator.checkFile(at: path, access: .readWrite) == .missing
    else { return }
    if missing == .failSuggestingCreate { throw CommandError.noStore(path: path) }
    throw InspectionError.missingFile(path: path)
  }
}

extension Console {
  /// Writes `value` as one pretty-printed JSON document and a newline.
  func writeJSON(_ value: JSONValue) {
    writeLine(value.pretty)
  }
}
