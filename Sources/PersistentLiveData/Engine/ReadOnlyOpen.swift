/// Opens an existing store file without writing anything — for a ``StoreOptions/readOnly`` store and for
/// `pld-tool`'s ``StoreInspector`` alike, so that both read the same files.
///
/// The connection is opened read-only (`SQLITE_OPEN_READONLY`), and validated by ``StoreFileValidator``.
/// Only when that fails and the folder is not writable does it fall back to an immutable open: "a WAL
/// database in a directory the process cannot write cannot even be read" (its `-shm` cannot be created),
/// so SQLite then reads the database file alone — which must be whole without its `-wal` file — and
/// assumes nobody changes it.
///
/// ```swift
/// let file = try StoreFileValidator.checkFile(at: path, access: .readOnly)
/// let opened = try ReadOnlyOpen.open(path: path, file: file, busyTimeoutMilliseconds: 5_000)
/// ```
enum ReadOnlyOpen {
  struct Opened {
    let connection: SQLiteConnection
    /// Whether the fallback was taken: the file is read alone and others' commits are not seen.
    let isImmutable: Bool
    let contents: StoreFileValidator.Contents
  }

  /// - Parameters:
  ///   - file: What ``StoreFileValidator/checkFile(at:access:)`` found with `.readOnly` access (not
  ///     `.missing`).
  ///   - salvaging: Read a truncated file too: SQLite then takes the file's real length instead of
  ///     refusing every read (`PRAGMA writable_schema`, harmless on a read-only connection).
  /// - Throws: The validator's ``/PersistentLiveDataBackend/PersistentLiveDataError``s, or the storage error
  ///   of the open, naming `path`.
  static func open(
    path: String, file: StoreFileValidator.FileVerdict, busyTimeoutMilliseconds: Int,
    verifyingIntegrity: Bool = false, salvaging: Bool = false
  ) throws -> Opened {
    do {
      return try open(
        path: path, immutable: false, file: file, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
        verifyingIntegrity: verifyingIntegrity, salvaging: salvaging)
    } catch let error as SQLiteError
      where (error.isCantOpen || error.isReadOnly) && !POSIX.isWritable(POSIX.parentFolder(of: path))
    {
      let immutableFile = try StoreFileValidator.checkFile(at: path, access: .immutable)
      do {
        return try open(
          path: path, immutable: true, file: immutableFile, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
          verifyingIntegrity: verifyingIntegrity, salvaging: salvaging)
      } catch let immutableError as SQLiteError {
        throw StoreErrors.map(immutableError, path: path)
      }
    } catch let error as SQLiteError {
      throw StoreErrors.map(error, path: path)
    }
  }

  private static func open(
    path: String, immutable: Bool, file: StoreFileValidator.FileVerdict, busyTimeoutMilliseconds: Int,
    verifyingIntegrity: Bool, salvaging: Bool
  ) throws -> Opened {
    let connection = try SQLiteConnection(path: path, mode: immutable ? .readOnlyImmutable : .readOnly)
    do {
      try connection.busyTimeout(busyTimeoutMilliseconds)
      if salvaging { try connection.execute("PRAGMA writable_schema = ON") }
      let contents = try StoreFileValidator.checkContents(
        of: connection, path: path, file: file, verifyingIntegrity: verifyingIntegrity)
      return Opened(connection: connection, isImmutable: immutable, contents: contents)
    } catch {
      connection.close()
      throw error
    }
  }
}
