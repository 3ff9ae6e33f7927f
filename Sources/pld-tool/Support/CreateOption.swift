import ArgumentParser

/// `--create`, for the commands that may write to a store that does not exist yet (`set`, `import`).
///
/// Without it a missing database file is an error and nothing is created, so that a mistyped path
/// never becomes a new, empty store.
struct CreateOption: ParsableArguments {
  @Flag(
    help: """
      Create the store, and its folders, if the database file does not exist, or make an empty \
      (0-byte) file the store, with mode 0600 (without it, a missing or empty file is an error and \
      nothing is created or changed).
      """)
  var create = false

  /// What ``StoreAccess/store(_:ifMissing:)`` does with a missing file.
  var ifMissing: StoreAccess.MissingFile { create ? .create : .failSuggestingCreate }
}
