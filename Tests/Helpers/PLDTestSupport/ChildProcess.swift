package import Foundation
internal import PersistentLiveData

#if canImport(Glibc)
internal import Glibc
#endif

// Unchecked because it owns a pipe and a buffer: one thread reads and waits at a time (see `finish`),
// while `kill` uses only the immutable pid.
/// A child process started with posix_spawn, its stdout on a pipe (cheaper than Foundation's Process:
/// no run loop, ~1 ms per child instead of ~50). Its stderr is captured too (``standardError``), never
/// passed through to the test runner's output, unless merged into stdout. The test targets add the paths
/// of their helper programs (`testChildPath`, `postgresChildPath`).
package final class ChildProcess: @unchecked Sendable {
  package let pid: pid_t
  private let output: Int32
  /// An unlinked temporary file holding the child's stderr; -1 when it is merged into stdout.
  private let errorFile: Int32
  private var buffer: [UInt8] = []
  /// Whether the child was reaped, and its wait status: set by the thread that waited, read by the test
  /// (a lock orders the two, which a continuation resumed from a detached thread does not show TSan).
  private let reaping = Locked((reaped: false, status: Int32(0)))
  /// The wait status, once the process was reaped (0 before).
  package var status: Int32 { reaping.withLock { $0.status } }

  /// The folder holding the built products (`.build/debug` or similar).
  package static var productsFolder: URL {
    let bundle = Bundle(for: ChildProcess.self).bundleURL
    return bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
  }

  /// The path of the program `name` built beside the tests — or, when this build left it out
  /// (`PLD_SANITIZER_WITHOUT_TOOLS=1`: the sanitizer pass builds neither `pld-tool` nor `pld-flags`), the
  /// one in the folder `PLD_TOOLS_FOLDER` names (the plain build's). A program is a process of its own:
  /// the sanitizer checks this one.
  package static func product(_ name: String) -> String {
    let local = productsFolder.appendingPathComponent(name).path
    guard !FileManager.default.fileExists(atPath: local),
      let folder = ProcessInfo.processInfo.environment["PLD_TOOLS_FOLDER"], !folder.isEmpty
    else { return local }
    return URL(fileURLWithPath: folder).appendingPathComponent(name).path
  }

  /// Starts `executable arguments…` with its standard output on a pipe this object reads; with
  /// `mergingStandardError`, its standard error goes to the same pipe, else to a file
  /// ``standardError`` reads. `environment` adds to (or overrides) this process's environment.
  package init(
    _ executable: String, _ arguments: [String], mergingStandardError: Bool = false,
    environment: [String: String] = [:]
  ) throws {
    // A file rather than a second pipe: nobody has to drain it while the test reads stdout. Close-on-exec,
    // so that other children started meanwhile do not inherit it; dup2 in the child clears the flag on 2.
    var errorFile: Int32 = -1
    if !mergingStandardError {
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("pld-child-stderr-\(UUID().uuidString)").path
      errorFile = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      guard errorFile >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
      unlink(path)
    }
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      if errorFile >= 0 { close(errorFile) }
      throw POSIXError(.EIO)
    }
    // Close-on-exec: a server another test starts meanwhile (pg_ctl, postgres) inherits every descriptor
    // that is not, and would hold the write end open, so that the output never ended. dup2 in the child
    // clears the flag on its stdout and stderr.
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, mergingStandardError ? fds[1] : errorFile, 2)
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
      if errorFile >= 0 { close(errorFile) }
      throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)
    }
    self.pid = pid
    self.output = fds[0]
    self.errorFile = errorFile
  }

  deinit {
    if !reaping.withLock({ $0.reaped }) {
      Glibc.kill(pid, SIGKILL)
      _ = wait()
    }
    close(output)
    if errorFile >= 0 { close(errorFile) }
  }

  /// What the child wrote to stderr so far (all of it once it has ended); empty when it was merged into
  /// stdout.
  package var standardError: String {
    guard errorFile >= 0 else { return "" }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = pread(errorFile, &chunk, chunk.count, off_t(bytes.count))
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The next line of stdout, or nil at end of output.
  package func readLine() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(output, &chunk, chunk.count)
      if count <= 0 {
        guard !buffer.isEmpty else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
      }
      buffer += chunk[..<count]
    }
  }

  /// Every remaining line of stdout.
  package func readAllLines() -> [String] {
    var lines: [String] = []
    while let line = readLine() { lines.append(line) }
    return lines
  }

  /// Waits for the process to end and returns its wait status.
  @discardableResult
  package func wait() -> Int32 {
    if let status = reaping.withLock({ $0.reaped ? $0.status : nil }) { return status }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    reaping.withLock { $0 = (true, status) }
    return status
  }

  /// ``readLine()`` for async code: the blocking read runs on a thread of its own, so that waiting for a
  /// slow child (one built with a sanitizer, on a loaded machine) holds no thread of the cooperative pool.
  package func readLineOffPool() async -> String? {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: self.readLine()) }
    }
  }

  /// ``wait()`` for async code, on a thread of its own.
  @discardableResult
  package func waitOffPool() async -> Int32 {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: self.wait()) }
    }
  }

  package func kill(_ signal: Int32) { Glibc.kill(pid, signal) }

  /// The exit code if the process exited normally.
  package var exitCode: Int32? { (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil }
  /// The signal that ended the process, if any.
  package var terminatingSignal: Int32? { (status & 0x7F) != 0 ? status & 0x7F : nil }

  /// Reads every line of output and waits for the process to exit, on a thread of its own (the blocking
  /// reads never hold a thread of the cooperative pool); kills it with SIGKILL if it is still running
  /// after `limit`.
  ///
  /// - Returns: Every line it printed and whether it had to be killed.
  package func finish(within limit: Duration) async -> (lines: [String], killed: Bool) {
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
