import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `pld-tool` binary (or another product of the package, such as `pld-todo`), run as a child
/// process with pipes, like a user's shell would.
///
/// Uses `posix_spawn` and `poll`, so a test can read the child's output line by line with a timeout
/// (`watch`), send it signals, and collect its exit status.
final class ToolProcess {
  /// The built `pld-tool`, in the folder of the running test bundle where SwiftPM puts the products.
  static let binaryPath = productPath("pld-tool")

  /// The path of the built product `name`: next to the running test bundle, where SwiftPM puts every
  /// product of the package it built.
  static func productPath(_ name: String) -> String {
    var candidates: [URL] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
    }
    candidates.append(Bundle.main.bundleURL)
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
    for folder in candidates {
      let path = folder.appendingPathComponent(name).path
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return candidates.first?.appendingPathComponent(name).path ?? name
  }

  let pid: pid_t
  private var stdinFD: Int32
  private let stdoutFD: Int32
  private let stderrFD: Int32
  private var stdoutBuffer: [UInt8] = []
  private var stderrBuffer: [UInt8] = []
  private var stdoutClosed = false
  private var stderrClosed = false
  private(set) var exitStatus: Int32?

  /// Starts `pld-tool arguments…` (or `program`) with `COLUMNS=80`, `TZ=UTC` and a non-terminal
  /// stdin/stdout/stderr.
  init(_ arguments: [String], environment: [String: String] = [:], program: String = binaryPath) throws {
    var input: [Int32] = [0, 0]
    var output: [Int32] = [0, 0]
    var error: [Int32] = [0, 0]
    guard pipe(&input) == 0, pipe(&output) == 0, pipe(&error) == 0 else { throw POSIXError(.EMFILE) }
    // Close-on-exec: a process another test spawns meanwhile (a PostgreSQL server, which lives for the
    // whole run) would otherwise inherit the write ends, and the output would never end. dup2 in the
    // child clears the flag on its 0, 1 and 2.
    for fd in input + output + error { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input[0], 0)
    posix_spawn_file_actions_adddup2(&actions, output[1], 1)
    posix_spawn_file_actions_adddup2(&actions, error[1], 2)
    for fd in input + output + error { posix_spawn_file_actions_addclose(&actions, fd) }

    // Test threads may block signals, and a child inherits the spawning thread's mask: start the child
    // with no signal blocked and default actions for SIGINT and SIGTERM, as from a shell.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var emptyMask = sigset_t()
    sigemptyset(&emptyMask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGTERM)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigmask(&attributes, &emptyMask)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    var env = ProcessInfo.processInfo.environment
    env["COLUMNS"] = "80"
    env["TZ"] = "UTC"
    for (name, value) in environment { env[name] = value }
    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var child: pid_t = 0
    let rc = posix_spawn(&child, program, &actions, &attributes, argv, envp)
    close(input[0])
    close(output[1])
    close(error[1])
    guard rc == 0 else {
      close(input[1])
      close(output[0])
      close(error[0])
      throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .ENOENT)
    }
    pid = child
    stdinFD = input[1]
    stdoutFD = output[0]
    stderrFD = error[0]
  }

  deinit {
    if exitStatus == nil {
      kill(pid, SIGKILL)
      _ = wait(timeout: 5)
    }
    closeInput()
    close(stdoutFD)
    close(stderrFD)
  }

  /// Runs `pld-tool arguments…` (or `program`) to completion, feeding `input` to its standard input.
  static func run(
    _ arguments: [String], input: String = "", timeout: TimeInterval = 30,
    environment: [String: String] = [:], program: String = binaryPath
  ) throws -> CommandResult {
    let process = try ToolProcess(arguments, environment: environment, program: program)
    process.write(input)
    process.closeInput()
    guard process.wait(timeout: timeout) != nil else {
      throw CocoaError(
        .fileReadUnknown, userInfo: [NSDebugDescriptionErrorKey: "\(program) \(arguments) timed out"])
    }
    return process.result
  }

  /// Writes `text` to the child's standard input.
  func write(_ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count, stdinFD >= 0 {
      let written = bytes[offset...].withUnsafeBytes { Glibc.write(stdinFD, $0.baseAddress, $0.count) }
      if written <= 0 { return }
      offset += written
    }
  }

  /// Closes the child's standard input (end of file).
  func closeInput() {
    if stdinFD >= 0 { close(stdinFD) }
    stdinFD = -1
  }

  /// Everything collected so far.
  var result: CommandResult {
    CommandResult(
      stdout: String(decoding: stdoutBuffer, as: UTF8.self),
      stderr: String(decoding: stderrBuffer, as: UTF8.self),
      status: exitStatus ?? -1)
  }

  /// The next line of standard output (without its newline), or nil after `timeout` seconds.
  func readLine(timeout: TimeInterval) -> String? {
    readLine(fromStandardError: false, timeout: timeout)
  }

  /// The next line of standard error (without its newline), or nil after `timeout` seconds.
  func readErrorLine(timeout: TimeInterval) -> String? {
    readLine(fromStandardError: true, timeout: timeout)
  }

  private func readLine(fromStandardError: Bool, timeout: TimeInterval) -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      let buffer = fromStandardError ? stderrBuffer : stdoutBuffer
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        if fromStandardError {
          stderrBuffer.removeSubrange(...newline)
        } else {
          stdoutBuffer.removeSubrange(...newline)
        }
        return line
      }
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 || (stdoutClosed && stderrClosed) { return nil }
      pump(timeout: remaining)
    }
  }

  /// Sends `signal` to the child.
  func send(_ signal: Int32) {
    kill(pid, signal)
  }

  /// Waits for the child to exit, reading its output meanwhile; its exit status, or nil on timeout.
  /// A child killed by a signal reports 128 + the signal number, as shells do.
  @discardableResult
  func wait(timeout: TimeInterval) -> Int32? {
    if let exitStatus { return exitStatus }
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      var status: Int32 = 0
      let waited = waitpid(pid, &status, WNOHANG)
      if waited == pid {
        // The child has exited: what it wrote is in the pipes. Should another process still hold a
        // write end, stop reading after a few seconds rather than wait for it.
        let drained = Date().addingTimeInterval(5)
        while !(stdoutClosed && stderrClosed), Date() < drained { pump(timeout: 0.1) }
        let signal = status & 0x7F
        exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        return exitStatus
      }
      if Date() >= deadline { return nil }
      if stdoutClosed && stderrClosed {
        usleep(5_000)
      } else {
        pump(timeout: min(0.05, max(0, deadline.timeIntervalSinceNow)))
      }
    }
  }

  /// Reads whatever is available on standard output and error, waiting at most `timeout` seconds.
  private func pump(timeout: TimeInterval) {
    var fds: [pollfd] = []
    if !stdoutClosed { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
    if !stderrClosed { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
    guard !fds.isEmpty else { return }
    let ready = poll(&fds, nfds_t(fds.count), Int32(max(0, timeout) * 1000))
    guard ready > 0 else { return }
    var chunk = [UInt8](repeating: 0, count: 65_536)
    for entry in fds where entry.revents != 0 {
      let count = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
      if entry.fd == stdoutFD {
        if count <= 0 { stdoutClosed = true } else { stdoutBuffer += chunk[..<count] }
      } else {
        if count <= 0 { stderrClosed = true } else { stderrBuffer += chunk[..<count] }
      }
    }
  }
}
