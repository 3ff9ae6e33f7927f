extension PersistentLiveDataError {
  /// One sentence naming what failed and where.
  ///
  /// ```swift
  /// print(PersistentLiveDataError.unknownVersion(key: "theme", version: 9))
  /// // Version 9 of key "theme" does not exist or has been pruned.
  /// ```
  public var description: String {
    switch self {
    case .undecodable(let key, let version, let reason):
      return
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) cannot be decoded: \(reason). "
        + "If the type changed, make it a PersistentValue, bump its schemaVersion and decode the old shape "
        + "in init(from:storedSchemaVersion:); or choose a DecodeFailurePolicy (StoreOptions.onUndecodable). "
        + "If another program wrote a wrong value, write a good one over it "
        + "(pld-tool rollback DB KEY VERSION, or set)."
    case .valueSchemaTooNew(let key, let version, let stored, let supported):
      return
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) was written with schema version \(stored), "
        + "newer than the schema version \(supported) this build of the type reads; it was left untouched. "
        + "Update the app, or choose a DecodeFailurePolicy (StoreOptions.onUndecodable)."
    case .encodingFailed(let key, let reason):
      // Foundation's reasons end with a period of their own.
      let sentence = reason.hasSuffix(".") ? reason : reason + "."
      return "The value for key \(EscapedText.quotedForMessage(key)) cannot be encoded as JSON: \(sentence)"
    case .valueTooDeep(let key, let depth):
      return
        "The value for key \(EscapedText.quotedForMessage(key)) nests arrays and objects deeper than the "
        + "\(JSONDepth.limit) levels JSONDecoder reads back (one is at level \(depth)); nothing was written. "
        + "Store it flatter: its nodes in an array, each naming its parent."
    case .typeMismatch(let key, let existing, let requested):
      return "Key \(EscapedText.quotedForMessage(key)) is already open as \(existing), not \(requested)."
    case .invalidKey(let key, let reason):
      return "Key \(EscapedText.quotedForMessage(key)) is invalid: \(reason)."
    case .unknownVersion(let key, let version):
      return
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) does not exist or has been pruned."
    case .diskFull(let path):
      return "The disk holding \(EscapedText.quotedForMessage(path)) is full; nothing was written."
    case .readOnly(let path):
      return
        "\(EscapedText.quotedForMessage(path)) is read-only (the store was opened with StoreOptions.readOnly, "
        + "or the file, its folder or its file system cannot be written); nothing was written."
    case .busy(let path):
      return "\(EscapedText.quotedForMessage(path)) is locked by another connection; try again."
    case .corrupt(let path, let detail):
      let oneLine = detail.split(whereSeparator: \.isNewline).joined(separator: "; ")
      return "\(EscapedText.quotedForMessage(path)) is a damaged database (\(oneLine)); nothing was written "
        + "over the damage. Check the whole file with `pld-tool verify`; restore a backup, or recover what "
        + "is readable with `pld-tool export FILE --salvage > rows.jsonl`, then "
        + "`pld-tool import NEW rows.jsonl --create`."
    case .notADatabase(let path):
      return "\(EscapedText.quotedForMessage(path)) is not an SQLite database; it was left untouched."
    case .foreignDatabase(let path):
      return
        "\(EscapedText.quotedForMessage(path)) is another application's SQLite database, not a PersistentLiveData store."
    case .schemaTooNew(let path, let found, let supported):
      return
        "\(EscapedText.quotedForMessage(path)) has schema version \(found), newer than the \(supported) this library supports."
    case .readOnlyMigration(let path, let migration):
      return
        "\(EscapedText.quotedForMessage(path)) was migrated by a newer version of this library (migration "
        + "\(migration)), which versions that do not know it may read but not write; nothing was written. "
        + "Upgrade the library to write to it."
    case .storeClosed(let path):
      return "The store \(path.map(EscapedText.quotedForMessage) ?? "in memory") is closed."
    case .alreadyOpen(let path):
      return
        "\(EscapedText.quotedForMessage(path)) is already open in this process; use the existing PersistentStore."
    case .symbolicLink(let path):
      return "\(EscapedText.quotedForMessage(path)) is a symbolic link; stores do not follow symbolic links."
    case .cannotOpen(let path, let code, let reason):
      return "\(EscapedText.quotedForMessage(path)) cannot be opened (code \(code)): \(reason)."
    case .ioError(let path, let code, let reason):
      return "I/O error on \(EscapedText.quotedForMessage(path)) (SQLite code \(code)): \(reason)."
    case .sqlite(let path, let code, let message):
      return
        "SQLite error \(code) on \(path.map(EscapedText.quotedForMessage) ?? "the in-memory store"): \(message)."
    case .versionsExhausted(let key, let path):
      return
        "Key \(EscapedText.quotedForMessage(key)) in \(EscapedText.quotedForMessage(path)) has no version number left (it is at \(Int64.max)); "
        + "nothing was written. Store the value under a new key."
    case .changesPruned(let key, let since, let oldestKept):
      return
        "Versions of key \(EscapedText.quotedForMessage(key)) after \(since) are no longer stored (the oldest "
        + "kept is \(oldestKept)): they were pruned or removed. Read history() and continue from its newest version."
    case .isADirectory(let path):
      return
        "\(EscapedText.quotedForMessage(path)) is a directory, not a database file; give the path of a file, such as one inside it, or move the directory away."
    case .migrationFailed(let path, let version, let name, let reason):
      return
        "Migration \(version) (\(EscapedText.quotedForMessage(name))) of \(EscapedText.quotedForMessage(path)) failed (\(reason)); it was rolled back, leaving the file at schema version \(version - 1): report the cause to the app's developers."
    case .notInTransaction(let operation):
      return
        "\(operation) cannot run inside the body of a transaction { } or write { } of the same store; call it "
        + "before or after it. Nothing was changed."
    case .schemaTooOld(let path, let found, let required):
      return
        "\(EscapedText.quotedForMessage(path)) has schema version \(found), older than the \(required) this library "
        + "reads, and a read-only store never upgrades a file: open it once without StoreOptions.readOnly "
        + "(the upgrade is made in place), then read it."
    case .applicationMismatch(let path, let expected, let found):
      return
        "\(EscapedText.quotedForMessage(path)) belongs to application \(EscapedText.quotedForMessage(found)), not "
        + "\(EscapedText.quotedForMessage(expected)) (StoreOptions.applicationIdentifier); it was left "
        + "untouched. Check the path."
    case .fileExists(let path):
      return
        "\(EscapedText.quotedForMessage(path)) already exists; a backup never overwrites anything: choose a new path or move that one away."
    }
  }
}
