import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Claims a database file for one store in this process.
///
/// A process keeps at most one writer connection per file: SQLite 3.40's WAL-reset bug can damage a
/// file when two connections of one process write or checkpoint it concurrently. A second
/// ``PersistentStore`` on the same file (by device and inode, whatever the path spelling) is refused
/// with ``PersistentLiveDataError/alreadyOpen(path:)`` until the first is closed or released.
final class OpenFileRegistration: Sendable {
  private struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
  }

  private static let openFiles = Locked<Set<FileIdentity>>([])
  private let identity: FileIdentity

  /// Claims the file at `path`, which must exist.
  init(path: String) throws {
    var info = stat()
    guard stat(path, &info) == 0 else {
      let code = errno
      throw PersistentLiveDataError.cannotOpen(
        path: path, code: code, reason: String(cString: strerror(code)))
    }
    let identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    let claimed = Self.openFiles.withLock { $0.insert(identity).inserted }
    guard claimed else { throw PersistentLiveDataError.alreadyOpen(path: path) }
    self.identity = identity
  }

  deinit {
    _ = Self.openFiles.withLock { $0.remove(identity) }
  }
}
