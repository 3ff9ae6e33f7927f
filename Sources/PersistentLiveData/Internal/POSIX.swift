#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The C library's file-system calls the package makes, in one place: the only file of the library that
/// imports Glibc, Musl or Darwin.
///
/// Each helper wraps one call (or a short, fixed sequence of them) and reports failures by their `errno`,
/// so the callers read as Swift and do not repeat the platform imports.
///
/// ```swift
/// switch POSIX.linkStatus(path) {
/// case .success(let status) where status.kind == .directory: refuse()
/// case .failure(let error) where error.code == POSIX.ErrorCode.noEntry: create()
/// default: open()
/// }
/// ```
enum POSIX {
  /// The `errno` values the package tests.
  enum ErrorCode {
    /// `ENOENT`: no such file or directory.
    static let noEntry: Int32 = ENOENT
    /// `EEXIST`: the file exists (an exclusive create lost a race).
    static let exists: Int32 = EEXIST
    /// `EINTR`: interrupted by a signal; retry.
    static let interrupted: Int32 = EINTR
    /// `ELOOP`: a symbolic link where `O_NOFOLLOW` refuses one.
    static let symbolicLinkLoop: Int32 = ELOOP
    /// `EACCES`: permission denied.
    static let accessDenied: Int32 = EACCES
    /// `EPERM`: operation not permitted (an immutable file).
    static let notPermitted: Int32 = EPERM
    /// `EROFS`: read-only file system.
    static let readOnlyFileSystem: Int32 = EROFS
    /// `ENOSPC`: no space left on the device.
    static let noSpace: Int32 = ENOSPC
    /// `EDQUOT`: disk quota exceeded.
    static let quotaExceeded: Int32 = EDQUOT
  }

  /// A failed system call: which one and the `errno` it set.
  struct Failure: Error, Sendable, Hashable {
    /// The call that failed (`lstat`, `open`, `fstat`, `read`, …).
    let operation: String
    /// Its `errno`.
    let code: Int32
  }

  /// What kind of file a path names.
  enum FileKind: Sendable, Hashable {
    case regular, directory, symbolicLink, other
  }

  /// The fields of `stat` the package reads.
  struct FileStatus: Sendable, Hashable {
    let kind: FileKind
    let size: Int64
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
      switch info.st_mode & S_IFMT {
      case S_IFREG: kind = .regular
      case S_IFDIR: kind = .directory
      case S_IFLNK: kind = .symbolicLink
      default: kind = .other
      }
      size = Int64(info.st_size)
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
    }
  }

  // MARK: Messages and paths

  /// `strerror(code)` as a Swift string: "No such file or directory".
  ///
  /// ```swift
  /// POSIX.message(for: POSIX.ErrorCode.accessDenied)   // "Permission denied"
  /// ```
  static func message(for code: Int32) -> String {
    strerror(code).map { String(cString: $0) } ?? "error \(code)"
  }

  /// The folder holding `path`: everything before the last `/`; `"/"` for a file at the root and `"."`
  /// for a bare file name.
  ///
  /// ```swift
  /// POSIX.parentFolder(of: "/var/app/state.db")   // "/var/app"
  /// POSIX.parentFolder(of: "state.db")            // "."
  /// ```
  static func parentFolder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  /// The part of `path` after its last `/` (all of it without one).
  ///
  /// ```swift
  /// POSIX.lastComponent(of: "/var/app/state.db")   // "state.db"
  /// ```
  static func lastComponent(of path: String) -> Substring {
    guard let slash = path.lastIndex(of: "/") else { return path[...] }
    return path[path.index(after: slash)...]
  }

  /// `realpath(path)`, or `nil` when it cannot be resolved.
  static func realPath(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
  }

  // MARK: File status

  /// `lstat(path)`: the path itself, a symbolic link not followed.
  static func linkStatus(_ path: String) -> Result<FileStatus, Failure> {
    var info = stat()
    guard lstat(path, &info) == 0 else { return .failure(Failure(operation: "lstat", code: errno)) }
    return .success(FileStatus(info))
  }

  /// `stat(path)`: what the path leads to, symbolic links followed.
  static func status(_ path: String) -> Result<FileStatus, Failure> {
    var info = stat()
    guard stat(path, &info) == 0 else { return .failure(Failure(operation: "stat", code: errno)) }
    return .success(FileStatus(info))
  }

  /// Whether `path` leads to an existing file (`access(2)` with `F_OK`: symbolic links followed, so a
  /// dangling link does not count).
  static func exists(_ path: String) -> Bool {
    access(path, F_OK) == 0
  }

  /// Whether the current user may write `path` (`access(2)` with `W_OK`, which also reports read-only
  /// mounts and, for root, immutable files).
  static func isWritable(_ path: String) -> Bool {
    access(path, W_OK) == 0
  }

  // MARK: Reading and creating files

  /// Opens `path` read-only without following a symbolic link or blocking on a FIFO, and reads up to
  /// `count` bytes from its start. Nothing is written.
  ///
  /// - Returns: The file's status (from the open descriptor) and the bytes read (fewer at the end of
  ///   the file; none for what is not a regular file).
  /// - Throws: ``Failure`` from `open` (`ELOOP` for a link swapped in since an `lstat`), `fstat` or
  ///   `read`.
  static func readPrefix(of path: String, count: Int) throws(Failure) -> (FileStatus, [UInt8]) {
    // O_NOFOLLOW: the path could have been swapped for a link since lstat; O_NONBLOCK: or for a FIFO.
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else { throw Failure(operation: "open", code: errno) }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw Failure(operation: "fstat", code: errno) }
    let status = FileStatus(info)
    guard status.kind == .regular else { return (status, []) }
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
      let got = bytes.withUnsafeMutableBytes { buffer in
        pread(descriptor, buffer.baseAddress?.advanced(by: filled), buffer.count - filled, off_t(filled))
      }
      if got < 0 {
        let code = errno
        if code == EINTR { continue }
        throw Failure(operation: "read", code: code)
      }
      if got == 0 { break }
      filled += got
    }
    return (status, Array(bytes.prefix(filled)))
  }

  /// Creates an empty file at `path` with `permissions`, failing if anything is already there (a
  /// symbolic link included): `open(O_CREAT | O_EXCL | O_NOFOLLOW)`.
  ///
  /// ```swift
  /// try POSIX.createExclusively("state.db", permissions: 0o600)
  /// ```
  /// - Throws: ``Failure`` with `EEXIST` when the path is taken, or why the file cannot be created.
  static func createExclusively(_ path: String, permissions: UInt32) throws(Failure) {
    let descriptor = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, mode_t(permissions))
    guard descriptor >= 0 else { throw Failure(operation: "open", code: errno) }
    close(descriptor)
  }
}
