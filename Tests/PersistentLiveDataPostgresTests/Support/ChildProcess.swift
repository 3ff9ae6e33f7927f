import Foundation
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

// Unchecked because it owns a pipe and a buffer: one task reads and waits at a time (see `finish`), while
// `kill` uses only the immutable pid.
/// A child process started with posix_spawn, its stdout on a pipe (cheaper than Foundation's Process:
/// no run loop, ~1 ms per child instead of ~50). The shared-store copy of the SQLite suite's helper.
final class ChildProcess: @unchecked Sendable {
  let pid: pid_t
  private let output: Int32
  private var buffer: [UInt8] = []
  private var reaped = false
  private(set) var status: Int32 = 0

  /// The replica program built with the tests, next to the test bundle.
  static var postgresChildPath: String {
    productsFolder.appendingPathComponent("pld-postgres-child").path
  }

  /// The folder holding the built products (`.build/debug` or similar).
  static var productsFolder: URL {
    let bundle = Bundle(for: ChildProcess.self).bundleURL
    return bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
  }

  /// Starts `executable arguments…` with its standard output (and standard error) on a pipe this object
  /// reads. `environment` adds to (or overrides) this process's environment.
  init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw POSIXError(.EIO) }
    // Close-on-exec: a server another test starts meanwhile (pg_ctl, postgres) inherits every descriptor
    // that is not, and would hold the write end open, so that the output never ended. dup2 in the child
    // clears the flag on its stdout and stderr.
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0)=\($1)") } + [nil]
    defer { envp.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    close(fds[1])
    guard rc == 0 else {
      close(fds[0])
      throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)
    }
    self.pid = pid
    self.output = fds[0]
  }

  deinit {
    if !reaped {
      Glibc.kill(pid, SIGKILL)
      _ = wait()
    }
    close(output)
  }

  /// The next line of output, or nil at its end.
  func readLine() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(output, &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        guard !buffer.isEmpty else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
      }
      buffer += chunk[..<count]
    }
  }

  /// Every remaining line of output.
  func readAllLines() -> [String] {
    var lines: [String] = []
    while let line = readLine() { lines.append(line) }
    return lines
  }

  /// Waits for the process to end and returns its wait status.
  @discardableResult
  func wait() -> Int32 {
    guard !reaped else { return status }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    self.status = status
    reaped = true
    return status
  }

  func kill(_ signal: Int32) { Glibc.kill(pid, signal) }

  /// The exit code if the process exited normally.
  var exitCode: Int32? { (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil }

  /// Reads every line of output and waits for the process to exit, on a thread of its own (the blocking
  /// reads never hold a thread of the cooperative pool); kills it with SIGKILL if it is still running
  /// after `limit`.
  ///
  /// - Returns: Every line it printed and whether it had to be killed.
  func finish(within limit: Duration) async -> (lines: [String], killed: Bool) {
    let killed = Locked(false)
    let finished = Locked(false)
    let pid = pid
    let watchdog = Task {
      try? await Task.sleep(for: limit)
      guard !Task.isCancelled else { return }
      // Only until it is reaped, so that the pid is still its own.
      finished.withLock { done in
        if !done {
          killed.withLock { $0 = true }
          Glibc.kill(pid, SIGKILL)
        }
      }
    }
    let lines = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
      Thread.detachNewThread {
        let lines = self.readAllLines()
        self.wait()
        finished.withLock { $0 = true }
        continuation.resume(returning: lines)
      }
    }
    watchdog.cancel()
    return (lines, killed.withLock { $0 })
  }
}
