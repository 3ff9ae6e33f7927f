internal import Foundation

/// ``PersistentStore/backup(to:)``: a consistent copy of the store in one new file.
///
/// The copy of a file is SQLite's `VACUUM INTO` run on a read transaction of its own connection: it holds every
/// commit made before it began (the WAL's included), writers of this and other processes go on meanwhile,
/// and nothing of the source changes. The destination is created first with `O_CREAT | O_EXCL`, so an
/// existing file — or a symbolic link, even a dangling one — is never overwritten; SQLite writes into that
/// empty file. An in-memory store is copied with SQLite's backup API. The copy and its folder are synced
/// before `backup` returns.
///
/// ```swift
/// try database.backup(to: "/backups/state-2026-11-25.db")
/// ```
extension StoreDatabase {
  func backup(to destination: String) throws {
    try ensureOpen()
    guard !destination.isEmpty else {
      throw PersistentLiveDataError.cannotOpen(path: destination, code: 0, reason: "the backup path is empty")
    }
    do {
      // The store's own files are 0600: a copy is no more open than they are.
      try POSIX.createExclusively(destination, permissions: 0o600)
    } catch {
      throw Self.destinationError(error, path: destination)
    }
    do {
      try copy(into: destination)
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

  private func copy(into destination: String) throws {
    guard let path else {
      // An in-memory database exists only on its connection: copied page by page, under the lock.
      let target: SQLiteConnection
      do {
        target = try SQLiteConnection(path: destination, mode: .readWrite)
      } catch {
        throw StoreErrors.map(error, path: destination)
      }
      defer { target.close() }
      try withConnection { connection, _ in
        do {
          try connection.copyDatabase(into: target)
        } catch let error as SQLiteError {
          throw StoreErrors.map(error, path: destination)
        }
      }
      return
    }
    let reader: SQLiteConnection
    do {
      reader = try SQLiteConnection(path: path, mode: .readOnly)
    } catch {
      throw StoreErrors.map(error, path: displayPath)
    }
    defer { reader.close() }
    try Self.vacuum(reader, into: destination)
  }

  private static func vacuum(_ connection: SQLiteConnection, into destination: String) throws {
    do {
      try connection.run("VACUUM INTO ?", [.text(destination)])
    } catch let error as SQLiteError {
      // Errors writing the copy (a full disk, a read-only folder) name the destination.
      throw StoreErrors.map(error, path: destination)
    }
  }

  private static func destinationError(_ failure: POSIX.Failure, path: String) -> PersistentLiveDataError {
    switch failure.code {
    case EEXIST, ELOOP: .fileExists(path: path)
    case ENOSPC, EDQUOT: .diskFull(path: path)
    case EROFS, EACCES, EPERM: .readOnly(path: path)
    default: .cannotOpen(path: path, code: failure.code, reason: POSIX.message(for: failure.code))
    }
  }
}
