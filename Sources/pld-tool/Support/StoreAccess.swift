import PersistentLiveData

/// Opening a store the way each kind of command needs it.
enum StoreAccess {
  /// A read-only inspector: never creates, migrates or writes the file.
  ///
  /// - Throws: ``InspectionError`` or ``PersistentLiveDataError`` naming the file.
  static func inspector(_ path: String) throws -> StoreInspector {
    try StoreInspector(path: path)
  }

  /// A store for writing, through the library's own write path.
  ///
  /// - Parameters:
  ///   - path: The database file.
  ///   - create: Whether a missing file becomes a new, empty store (`set`, `import`); otherwise a
  ///     missing file is an error, as for read commands.
  /// - Throws: ``InspectionError/missingFile(path:)`` or a ``PersistentLiveDataError`` naming the file
  ///   (`notADatabase`, `isADirectory`, `foreignDatabase`, `schemaTooNew`, `readOnly`, `busy`, …).
  static func store(_ path: String, create: Bool) throws -> PersistentStore {
    // The store checks the file again, with the same validator, when it opens it.
    if !create, try StoreFileValidator.checkFile(at: path, access: .readWrite) == .missing {
      throw InspectionError.missingFile(path: path)
    }
    return try PersistentStore(path: path)
  }
}

extension Console {
  /// Writes `value` as one pretty-printed JSON document and a newline.
  func writeJSON(_ value: JSONValue) {
    writeLine(value.pretty)
  }
}
