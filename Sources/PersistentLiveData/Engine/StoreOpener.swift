import Foundation

/// Creates or validates a store file and opens its connection.
///
/// Validation comes before anything is written: a file that is not ours — a directory, not SQLite, another
/// application's database, truncated, damaged, or of a newer schema — is refused with a distinct
/// ``/PersistentLiveDataBackend/PersistentLiveDataError`` and left byte-for-byte as it was, by the same
/// ``StoreFileValidator`` pld-tool uses. Only then does the store switch the file to WAL, set `synchronous`,
/// and apply migrations.
struct StoreOpener {
  let path: String?
  let options: StoreOptions

  struct Opened {
    let connection: SQLiteConnection
    let registration: OpenFileRegistration?
    /// The migrations this open applied (empty for an up-to-date file).
    let appliedMigrations: [Migration]
    /// A migration a newer library applied that makes the file read-only for this one (the README's
    /// compatibility promise).
    var readOnlyMigration: String? = nil
  }

  func openDatabase() throws -> Opened {
    guard let path else {
      let connection = try map { try SQLiteConnection(path: ":memory:", mode: .memory) }
      let applied = try configure(connection, path: ":memory:")
      return Opened(connection: connection, registration: nil, appliedMigrations: applied)
    }
    if options.readOnly { return try openReadOnly(at: path) }
    var file = try prepareFile(at: path)
    let registration = try OpenFileRegistration(path: path)  // of the file prepareFile made sure exists
    // SQLite returns "database is locked" without calling the busy handler in a few moments — another
    // process creating the file, or switching it to WAL — so the open itself waits as a busy timeout
    // would, then tries again from the file check.
    let deadline = ContinuousClock.now + .milliseconds(options.busyTimeoutMilliseconds)
    while true {
      do {
        return try openFile(at: path, file: file, registration: registration)
      } catch PersistentLiveDataError.busy where ContinuousClock.now < deadline {
        usleep(2_000)
        file = try prepareFile(at: path)
      }
    }
  }

  /// One attempt to open and configure the file at `path`.
  private func openFile(
    at path: String, file: StoreFileValidator.FileVerdict, registration: OpenFileRegistration
  ) throws -> Opened {
    let hadWriteAheadLog = StoreFileValidator.hasWriteAheadLog(path)
    let connection = try map(path: path) { try SQLiteConnection(path: path, mode: .readWrite) }
    do {
      // Before the first read: another process closing the file (its last connection checkpoints and
      // removes the WAL) or recovering it holds a lock for a moment, and a read without a busy timeout
      // fails at once with "database is locked".
      try map(path: path) { try connection.busyTimeout(options.busyTimeoutMilliseconds) }
      let contents = try map(path: path) {
        try StoreFileValidator.checkContents(
          of: connection, path: path, file: file, verifyingIntegrity: options.verifiesIntegrityOnOpen)
      }
      try map(path: path) { try checkApplication(of: connection, path: path) }
      let applied = try configure(connection, path: path)
      // A file a newer library made read-only for this one gets nothing written, not even the application.
      if contents.readOnlyMigration == nil {
        try map(path: path) { try recordApplication(in: connection) }
      }
      // Nothing is read per key: a key's latest row is read (by the primary key) when its live data is
      // first asked for, so that opening costs the same for ten keys as for a million.
      return Opened(
        connection: connection, registration: registration, appliedMigrations: applied,
        readOnlyMigration: contents.readOnlyMigration)
    } catch {
      // A refused file is left byte for byte, its WAL included: no checkpoint on this close. (Without a
      // WAL to begin with, the ordinary close removes the empty one this open created.)
      if hadWriteAheadLog {
        connection.closeWithoutCheckpoint()
      } else {
        connection.close()
      }
      throw error
    }
  }

  /// Refuses what the validator refuses; creates a missing file (0600) and its missing folders (0700).
  private func prepareFile(at path: String) throws -> StoreFileValidator.FileVerdict {
    let file = try StoreFileValidator.checkFile(at: path, access: .readWrite)
    guard file == .missing else {
      // A file this process cannot write would open, and only the first write would fail: say so now.
      if !POSIX.isWritable(path) { throw PersistentLiveDataError.readOnly(path: path) }
      return file
    }
    let folder = POSIX.parentFolder(of: path)
    if !FileManager.default.fileExists(atPath: folder) {
      do {
        try FileManager.default.createDirectory(
          atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      } catch {
        throw PersistentLiveDataError.cannotOpen(
          path: path, code: POSIX.ErrorCode.accessDenied, reason: "cannot create folder \(folder)")
      }
    }
    do {
      try POSIX.createExclusively(path, permissions: 0o600)
    } catch {
      // Created by someone else in the meantime: validate it like any existing file.
      if error.code == POSIX.ErrorCode.exists { return try prepareFile(at: path) }
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: error.code, reason: POSIX.message(for: error.code))
    }
    return .empty
  }

  /// WAL, `synchronous` from the durability option, the busy timeout, then migrations.
  private func configure(_ connection: SQLiteConnection, path: String) throws -> [Migration] {
    try map(path: path) {
      // A file's connection has it already (set before its first read); `:memory:` gets it here.
      try connection.busyTimeout(options.busyTimeoutMilliseconds)
      if path != ":memory:" {
        let mode = try connection.setPragma("journal_mode", "WAL")
        if mode?.lowercased() != "wal" {
          throw PersistentLiveDataError.cannotOpen(
            path: path, code: 0, reason: "the file cannot be switched to WAL mode")
        }
      }
      _ = try connection.setPragma("synchronous", options.durability == .full ? "FULL" : "NORMAL")
      if options.secureDelete {
        // "When secure_delete is on, SQLite overwrites deleted content with zeros." (SQLite, PRAGMA docs)
        _ = try connection.setPragma("secure_delete", "ON")
      }
    }
    do {
      return try Migrator().migrate(connection)
    } catch {
      throw Self.migrationError(error, connection: connection, path: path)
    }
  }

  /// What a failed migration is reported as: the validator's verdicts for a file that changed under the write
  /// lock; the storage error for what the environment refused (full disk, read-only file, lock, damage);
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/migrationFailed(path:version:name:reason:)`` for
  /// the rest.
  static func migrationError(_ error: any Error, connection: SQLiteConnection, path: String) -> any Error {
    // The failed migration was rolled back: it is the one after the file's current version.
    func failed(_ reason: String) -> PersistentLiveDataError {
      let current = (try? Migrator().schemaVersion(of: connection)) ?? 0
      let migration = MigrationCatalog.migrations.first { $0.version == current + 1 }
      return .migrationFailed(
        path: path, version: current + 1, name: migration?.name ?? "unknown", reason: reason)
    }
    switch error {
    case MigrationError.schemaTooNew(let found, let supported):
      return PersistentLiveDataError.schemaTooNew(path: path, found: found, supported: supported)
    case MigrationError.foreignDatabase:
      return PersistentLiveDataError.foreignDatabase(path: path)
    case let error as MigrationError:
      return failed(error.description)
    case let error as SQLiteError:
      let mapped = StoreErrors.map(error, path: path)
      if case .sqlite = mapped { return failed(error.message) }
      return mapped
    default:
      return error
    }
  }

  private func map<Result>(path: String = ":memory:", _ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch {
      throw StoreErrors.map(error, path: path)
    }
  }
}
