import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Calls a closure when some files of a folder are written, by any process: inotify, as the library's
/// own stores learn of other processes' commits (Linux only).
///
/// A store's commits write its `-wal` file with `write(2)` (`IN_MODIFY`); checkpoints write the
/// database file; the `-wal` is created and deleted as connections come and go. One watch on the
/// folder sees all of them under the files' names. Events are read on a thread of the watcher, which
/// calls `onChange` once per batch read; a full event queue (`IN_Q_OVERFLOW`) calls it as well.
///
/// ```swift
/// let watcher = try FolderWatcher(folder: "/var/app", names: ["app.db", "app.db-wal"]) { scan() }
/// defer { watcher.stop() }
/// ```
final class FolderWatcher: Sendable {
  /// Why the folder cannot be watched.
  struct Unavailable: Error, CustomStringConvertible {
    var description: String
  }

  #if os(Linux)
  private let inotify: Int32
  private let stopPipe: (read: Int32, write: Int32)

  /// Starts watching `folder` for writes to the files named `names`.
  ///
  /// - Throws: ``Unavailable`` when inotify or the watch cannot be set up.
  init(folder: String, names: Set<String>, onChange: @escaping @Sendable () -> Void) throws {
    let descriptor = inotify_init1(Int32(IN_CLOEXEC))
    guard descriptor >= 0 else { throw Unavailable(description: "inotify_init1: \(Self.lastError)") }
    let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE)
    guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
      let error = Self.lastError
      close(descriptor)
      throw Unavailable(description: "inotify_add_watch: \(error)")
    }
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
      close(descriptor)
      throw Unavailable(description: "pipe: \(Self.lastError)")
    }
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    inotify = descriptor
    stopPipe = (pipeEnds[0], pipeEnds[1])
    let thread = Thread { [inotify, stopPipe] in
      Self.readEvents(inotify: inotify, stop: stopPipe.read, names: names, onChange: onChange)
      close(inotify)
      close(stopPipe.read)
    }
    thread.name = "pld-tool serve: file changes"
    thread.start()
  }

  /// Stops watching; `onChange` is not called after the watcher's thread has seen it.
  func stop() {
    var byte: UInt8 = 1
    _ = write(stopPipe.write, &byte, 1)
    close(stopPipe.write)
  }

  private static var lastError: String { String(cString: strerror(errno)) }

  private static func readEvents(
    inotify: Int32, stop: Int32, names: Set<String>, onChange: @Sendable () -> Void
  ) {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var descriptors = [
      pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&descriptors, 2, -1)
      if ready < 0, errno == EINTR { continue }
      guard ready > 0, descriptors[1].revents == 0 else { return }
      let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR || errno == EAGAIN { continue }
      guard count > 0 else { return }
      if Self.concerns(buffer[0..<count], names: names) { onChange() }
    }
  }

  /// Whether a batch of `inotify_event`s (`wd`, `mask`, `cookie`, `len`, then `len` bytes of name)
  /// names one of `names`, or reports an overflow.
  private static func concerns(_ bytes: ArraySlice<UInt8>, names: Set<String>) -> Bool {
    var offset = bytes.startIndex
    let header = 16
    while offset + header <= bytes.endIndex {
      func word(_ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + at + $1]) << (8 * UInt32($1)) }
      }
      let mask = word(4)
      let length = Int(word(12))
      if mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
      let nameBytes = bytes[(offset + header)..<min(offset + header + length, bytes.endIndex)]
      let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
      if names.contains(name) { return true }
      offset += header + length
    }
    return false
  }
  #else
  init(folder: String, names: Set<String>, onChange: @escaping @Sendable () -> Void) throws {
    throw Unavailable(description: "file change notifications are implemented for Linux (inotify) only")
  }

  func stop() {}
  #endif
}
