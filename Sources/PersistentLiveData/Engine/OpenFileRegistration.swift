/// Claims a database file for one store in this process.
///
/// A process keeps at most one writer connection per file: SQLite 3.40's WAL-reset bug can damage a file when
/// two connections of one process write or checkpoint it concurrently. A second ``PersistentStore`` on the
/// same file (by device and inode, whatever the path spelling) is refused with
/// ``/PersistentLiveDataBackend/PersistentLiveDataError/alreadyOpen(path:)`` until the first is closed or
/// released. A ``StoreOptions/readOnly`` store claims nothing: it never writes or checkpoints.
final class OpenFileRegistration: Sendable {
  private struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
  }

  private static let openFiles = Locked<Set<FileIdentity>>([])
  private let identity: FileIdentity

  /// Claims the file at `path`, which must exist.
  init(path: String) throws {
    let status: POSIX.FileStatus
    switch POSIX.status(path) {
    case .success(let found): status = found
    case .failure(let failure):
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: failure.code, reason: POSIX.message(for: failure.code))
    }
    let identity = FileIdentity(device: status.device, inode: status.inode)
    let claimed = Self.openFiles.withLock { $0.insert(identity).inserted }
    guard claimed else { throw PersistentLiveDataError.alreadyOpen(path: path) }
    self.identity = identity
  }

  deinit {
    _ = Self.openFiles.withLock { $0.remove(identity) }
  }
}
