internal import Foundation

/// ``PersistentStore/backup(to:)``: a consistent copy of the store in one new file.
///
/// The copy of a file is made from a read transaction of its own connection (see ``StoreBackup``):
/// writers of this and other processes go on meanwhile, and nothing of the source changes. An in-memory
/// store is copied from its only connection, under the lock.
///
/// ```swift
/// try database.backup(to: "/backups/state-2026-11-25.db")
/// ```
extension StoreDatabase {
  func backup(to destination: String) throws {
    try ensureOpen()
    guard let path else {
      try StoreBackup.write(to: destination) { target in
        try withConnection { connection, _ in
          try StoreBackup.copyPages(of: connection, into: target, naming: destination)
        }
      }
      return
    }
    try StoreBackup.write(to: destination) { target in
      let reader: SQLiteConnection
      do {
        reader = try SQLiteConnection(path: path, mode: .readOnly)
      } catch {
        throw StoreErrors.map(error, path: displayPath)
      }
      defer { reader.close() }
      try StoreBackup.vacuum(reader, of: path, into: target, naming: destination)
    }
  }
}

/// How a store is copied into a new file, for ``PersistentStore/backup(to:)`` and `pld-tool backup`.
///
/// The destination is created first with `O_CREAT | O_EXCL`, so an existing file — or a symbolic link,
/// even a dangling one — is never overwritten; SQLite then writes into that empty file. A file source is
/// copied with `VACUUM INTO` (one read transaction: every commit before it began, the `-wal`'s included);
/// an in-memory one with SQLite's backup API (`VACUUM INTO` from an in-memory connection would open its
/// target in memory too and write no file). The copy and its folder are synced before it returns; a
/// failed copy is removed.
///
/// Only a symbolic link *at* the destination is refused. SQLite opens the copy with the source
/// connection's `SQLITE_OPEN_NOFOLLOW`, which refuses a link anywhere in the path, so the copy is given
/// to SQLite with its folder resolved (`realpath`), as ``SQLiteConnection`` does for a store: a folder
/// on the way that is a link (`/tmp` → `/private/tmp` on macOS) is followed, as when a store is created
/// there. Errors still name the destination as given.
///
/// ```swift
/// try StoreBackup.write(to: "copy.db") { target in
///   try StoreBackup.vacuum(reader, of: path, into: target, naming: "copy.db")
/// }
/// ```
enum StoreBackup {
  ///
  /// - Parameters:
  ///   - destination: The path of the copy, as the caller gave it.
  ///   - copy: Writes the copy into the (empty) file at the path it is given: `destination` with its
  ///     folder resolved.
  static func write(to destination: String, _ copy: (String) throws -> Void) throws {
    guard !destination.isEmpty else {
      throw PersistentLiveDataError.cannotOpen(path: destination, code: 0, reason: "the backup path is empty")
    }
    do {
      // The store's own files are 0600: a copy is no more open than they are.
      try POSIX.createExclusively(destination, permissions: 0o600)
    } catch {
      throw destinationError(error, path: destination)
    }
    do {
      // Created above without following a link at `destination` itself: resolving its folder now
      // cannot lead anywhere else.
      try copy(SQLiteConnection.resolvingParentDirectory(of: destination))
      try POSIX.synchronize(destination)
      try POSIX.synchronize(POSIX.parentFolder(of: destination))
    } catch {
      // Never leave a partial copy behind: the file is ours, created above.
      unlink(destination)
      if let failure = error as? POSIX.Failure {
        let reason = "\(failure.operation): \(POSIX.message(for: failure.code))"
        throw PersistentLiveDataError.ioError(path: destination, code: failure.code, reason: reason)
      }
      throw error
    }
  }

  /// `VACUUM INTO` the (empty) file at `target` from `connection`, a connection to `source`; errors
  /// writing the copy name `destination`.
  static func vacuum(
    _ connection: SQLiteConnection, of source: String, into target: String, naming destination: String
  ) throws {
    do {
      try connection.run("VACUUM INTO ?", [.text(target)])
    } catch let error as SQLiteError where error.isCorrupt {
      // A damaged page of the store stopped the copy: the store is damaged, not the copy.
      throw PersistentLiveDataError.corrupt(
        path: source, detail: "the backup stopped at a damaged page, and no copy was made: \(error.message)")
    } catch let error as SQLiteError {
      // Errors writing the copy (a full disk, a read-only folder) name the destination.
      throw StoreErrors.map(error, path: destination)
    }
  }

  /// Copies the pages of `connection`'s database into the (empty) file at `target`; errors name
  /// `destination`.
  static func copyPages(
    of connection: SQLiteConnection, into target: String, naming destination: String
  ) throws {
    do {
      let copy = try SQLiteConnection(path: target, mode: .readWrite)
      defer { copy.close() }
      try connection.copyDatabase(into: copy)
    } catch let error as SQLiteError {
      throw StoreErrors.map(error, path: destination)
    }
  }

  private static func destinationError(_ failure: POSIX.Failure, path: String) -> PersistentLiveDataError {
    switch failure.code {
    case EEXIST, ELOOP: .fileExists(path: path)
    case ENOSPC, EDQUOT: .diskFull(path: path)
    case EROFS, EACCES, EPERM: .readOnly(path: path)
    case ENOENT where !POSIX.exists(POSIX.parentFolder(of: path)):
      .cannotOpen(
        path: path, code: failure.code,
        reason: "its folder \(EscapedText.quotedForMessage(POSIX.parentFolder(of: path))) does not exist; "
          + "create it first")
    default: .cannotOpen(path: path, code: failure.code, reason: POSIX.message(for: failure.code))
    }
  }
}
