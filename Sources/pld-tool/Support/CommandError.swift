import PersistentLiveData

/// A failure of a command that is not a usage error: printed as `Error: <sentence>` on standard error,
/// exit status 1.
///
/// Errors of the library (``PersistentLiveDataError``, ``InspectionError``) are thrown as they are: their
/// descriptions already are one sentence naming the file, key or version.
struct CommandError: Error, CustomStringConvertible {
  /// The sentence.
  var description: String

  init(_ description: String) {
    self.description = description
  }

  /// `value` for key `key` is not JSON, or nests deeper than the store's limit (the library's error).
  static func invalidJSON(key: String, _ failure: JSONParser.Failure) -> any Error {
    if let depth = failure.depth { return PersistentLiveDataError.valueTooDeep(key: key, depth: depth) }
    return CommandError("The value for key \(TerminalText.quoted(key)) is not valid JSON: \(failure).")
  }

  /// Nothing is at `path`, and the command creates a store only when asked (`set`, `import`).
  static func noStore(path: String) -> CommandError {
    CommandError("No store at \(TerminalText.quoted(path)); pass --create to create one.")
  }

  /// The file at `path` is empty (0 bytes): not a store, though SQLite would take it for an empty
  /// database. `suggestingCreate`: the command adopts it with `--create` (`set`, `import`).
  static func emptyFile(path: String, suggestingCreate: Bool) -> CommandError {
    guard suggestingCreate else {
      return CommandError("\(TerminalText.quoted(path)) is an empty file, not a store.")
    }
    return CommandError(
      "No store at \(TerminalText.quoted(path)) (an empty file); pass --create to make it one.")
  }
}
