#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The C library's calls the package makes, in one place: with `Locked.swift` (whose pthread mutex must be
/// declared where the C library is imported), the only file of the library that imports Glibc, Musl or
/// Darwin.
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
  /// This process's id.
  static var processID: Int32 { getpid() }

  /// Gives up the thread's processor for a moment (`sched_yield`): the group-commit writer's short wait.
  @inline(__always)
  static func yieldThread() { sched_yield() }

  /// Whether a process with id `pid` exists on this machine (`kill(pid, 0)`: EPERM is another user's).
  static func isProcessAlive(_ pid: Int64) -> Bool {
    guard let pid = Int32(exactly: pid), pid > 0 else { return false }
    return kill(pid, 0) == 0 || errno == EPERM
  }

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

  /// Flushes `path` (a file, or a folder and so the names in it) to the disk: `fsync(2)`.
  ///
  /// ```swift
  /// try POSIX.synchronize("/backups/state.db")
  /// try POSIX.synchronize("/backups")   // the new file's name
  /// ```
  /// - Throws: ``Failure`` from `open` or `fsync`.
  static func synchronize(_ path: String) throws(Failure) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw Failure(operation: "open", code: errno) }
    defer { close(descriptor) }
    guard fsync(descriptor) == 0 else { throw Failure(operation: "fsync", code: errno) }
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

#if os(Linux)
// MARK: inotify (Linux)

extension POSIX {
  /// The calls of Linux's inotify(7) the store's file watcher makes, and the parsing of its events.
  ///
  /// One instance (a descriptor) watches many folders; each watch reports the changes of the files in
  /// its folder as events that name the file.
  ///
  /// ```swift
  /// let descriptor = try POSIX.Inotify.create().get()
  /// let watch = try POSIX.Inotify.addWatch(descriptor, folder: "/var/app").get()
  /// let events = POSIX.Inotify.readEvents(descriptor)   // [] until a file in /var/app is written
  /// ```
  enum Inotify {
    /// One event: the watch it belongs to, what happened, and the file's name within the folder.
    struct Event: Sendable, Hashable {
      let watch: Int32
      let mask: UInt32
      let name: String

      /// The kernel's queue overflowed: events were lost (`IN_Q_OVERFLOW`, watch -1).
      var isOverflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
      /// The watch is gone: its folder was deleted, unmounted, or the watch removed (`IN_IGNORED`).
      var isWatchRemoved: Bool { mask & UInt32(IN_IGNORED) != 0 }
    }

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`: a new instance, read without blocking.
    ///
    /// - Returns: The descriptor, or the failure (`EMFILE`: the per-user limit of instances,
    ///   `fs.inotify.max_user_instances`, is reached; `ENOSYS`: no inotify in this kernel).
    static func create() -> Result<Int32, Failure> {
      let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard descriptor >= 0 else { return .failure(Failure(operation: "inotify_init1", code: errno)) }
      return .success(descriptor)
    }

    /// `inotify_add_watch(descriptor, folder, IN_MODIFY | IN_ONLYDIR | IN_EXCL_UNLINK)`: reports writes
    /// (and truncations) of the files in `folder`. Watching a folder already watched by this instance
    /// returns the same watch.
    ///
    /// - Returns: The watch, or the failure (`ENOSPC`: the per-user limit of watches,
    ///   `fs.inotify.max_user_watches`, is reached; `ENOENT`, `ENOTDIR`, `EACCES`: no such folder).
    static func addWatch(_ descriptor: Int32, folder: String) -> Result<Int32, Failure> {
      let mask = UInt32(IN_MODIFY) | UInt32(IN_ONLYDIR) | UInt32(IN_EXCL_UNLINK)
      let watch = inotify_add_watch(descriptor, folder, mask)
      guard watch >= 0 else { return .failure(Failure(operation: "inotify_add_watch", code: errno)) }
      return .success(watch)
    }

    /// `inotify_add_watch(descriptor, file, IN_MODIFY | IN_DELETE_SELF)`: reports writes (and
    /// truncations) of the regular file at `file`, and its deletion. Unlike a folder watch, it costs the
    /// same whatever the folder holds (adding a folder watch walks the entries the kernel has cached for
    /// the folder: milliseconds in a folder of thousands of files).
    ///
    /// - Returns: The watch, or the failure (`ENOENT`: no such file; `ENOSPC`: the watch limit).
    static func addWatch(_ descriptor: Int32, file: String) -> Result<Int32, Failure> {
      let watch = inotify_add_watch(descriptor, file, fileMask(reportingWrites: true))
      guard watch >= 0 else { return .failure(Failure(operation: "inotify_add_watch", code: errno)) }
      return .success(watch)
    }

    /// `inotify_add_watch(descriptor, file, …)` again, on a file watched already: the same watch, now
    /// reporting writes or not (its deletion always). `file` names another file than the watched one if it
    /// was replaced since: the kernel then answers with another watch (or none), which the caller undoes.
    ///
    /// - Returns: The watch the kernel answered with, or nil (no such file).
    static func setWatch(_ descriptor: Int32, file: String, reportingWrites: Bool) -> Int32? {
      let watch = inotify_add_watch(descriptor, file, fileMask(reportingWrites: reportingWrites))
      return watch >= 0 ? watch : nil
    }

    private static func fileMask(reportingWrites: Bool) -> UInt32 {
      (reportingWrites ? UInt32(IN_MODIFY) : 0) | UInt32(IN_DELETE_SELF) | UInt32(IN_DONT_FOLLOW)
    }

    /// `inotify_rm_watch`: stops a watch (an `IN_IGNORED` event for it follows).
    static func removeWatch(_ descriptor: Int32, _ watch: Int32) {
      _ = inotify_rm_watch(descriptor, watch)
    }

    /// Reads every event queued on the (non-blocking) `descriptor`; empty when none is.
    static func readEvents(_ descriptor: Int32) -> [Event] {
      var events: [Event] = []
      // Room for many events: each is 16 bytes and a name padded to 16, at most NAME_MAX + 1 bytes.
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return events }
        buffer.withUnsafeBytes { events += parse(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
      }
    }

    /// Splits what `read` returned into events: `struct inotify_event { int wd; uint32_t mask, cookie,
    /// len; char name[len]; }`, the name padded with NULs.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [Event] {
      var events: [Event] = []
      var offset = 0
      let header = MemoryLayout<inotify_event>.size
      while offset + header <= bytes.count {
        let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
        let end = min(bytes.count, offset + header + length)
        let name = bytes[(offset + header)..<end].prefix { $0 != 0 }
        events.append(Event(watch: watch, mask: mask, name: String(decoding: name, as: UTF8.self)))
        offset = end
      }
      return events
    }
  }
}
#endif
