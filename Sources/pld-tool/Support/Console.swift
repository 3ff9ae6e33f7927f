import PersistentLiveData
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where commands write: standard output and standard error, or memory (in-process tests).
///
/// Commands never call `print`; they write through ``Console/current``, which ``PLDTool/execute(_:console:)``
/// binds for the duration of a run. Standard output is buffered and flushed at the end of a command, or
/// at once with ``flush()`` (watch flushes after every line); standard error is written immediately.
final class Console: Sendable {
  /// The console of the running command.
  @TaskLocal static var current = Console.standard

  /// The process's standard output (1) and standard error (2).
  static let standard = Console(destination: .fileDescriptors(output: 1, error: 2))

  private enum Destination {
    case fileDescriptors(output: Int32, error: Int32)
    case memory
  }

  private struct State {
    var pendingOutput: [UInt8] = []
    var capturedOutput: [UInt8] = []
    var capturedError: [UInt8] = []
  }

  private let destination: Destination
  private let state = Locked(State())
  private let stopFlag = Atomic<Bool>(false)
  /// Whether progress may be drawn on standard error.
  let isErrorTerminal: Bool

  private init(destination: Destination, isErrorTerminal: Bool? = nil) {
    self.destination = destination
    switch destination {
    case .fileDescriptors(_, let error):
      self.isErrorTerminal = isErrorTerminal ?? (isatty(error) == 1)
    case .memory:
      self.isErrorTerminal = isErrorTerminal ?? false
    }
  }

  /// A console that keeps everything in memory, for tests.
  ///
  /// - Parameter errorIsTerminal: Pretend standard error is a terminal (progress is then drawn).
  static func capturing(errorIsTerminal: Bool = false) -> Console {
    Console(destination: .memory, isErrorTerminal: errorIsTerminal)
  }

  /// Whether the process-wide signal handlers of `watch` may be installed (not for in-memory consoles).
  var handlesSignals: Bool {
    if case .fileDescriptors = destination { return true }
    return false
  }

  // MARK: Writing

  /// Writes `text` to standard output (buffered).
  func write(_ text: String) {
    let bytes = Array(text.utf8)
    let full: [UInt8]? = state.withLock { state in
      switch destination {
      case .memory:
        state.capturedOutput += bytes
        return nil
      case .fileDescriptors:
        state.pendingOutput += bytes
        guard state.pendingOutput.count >= 64 * 1024 else { return nil }
        defer { state.pendingOutput.removeAll(keepingCapacity: true) }
        return state.pendingOutput
      }
    }
    if let full, case .fileDescriptors(let output, _) = destination { Self.writeAll(full, to: output) }
  }

  /// Writes `text` and a newline to standard output.
  func writeLine(_ text: String = "") {
    write(text + "\n")
  }

  /// Writes `text` to standard error at once (standard output is flushed first, to keep the order).
  func writeError(_ text: String) {
    flush()
    switch destination {
    case .memory:
      state.withLock { $0.capturedError += Array(text.utf8) }
    case .fileDescriptors(_, let error):
      Self.writeAll(Array(text.utf8), to: error)
    }
  }

  /// Writes what is buffered for standard output.
  func flush() {
    guard case .fileDescriptors(let output, _) = destination else { return }
    let pending = state.withLock { state in
      defer { state.pendingOutput.removeAll(keepingCapacity: true) }
      return state.pendingOutput
    }
    if !pending.isEmpty { Self.writeAll(pending, to: output) }
  }

  /// Everything written to standard output so far (in-memory consoles only).
  var capturedOutput: String { state.withLock { String(decoding: $0.capturedOutput, as: UTF8.self) } }
  /// Everything written to standard error so far (in-memory consoles only).
  var capturedError: String { state.withLock { String(decoding: $0.capturedError, as: UTF8.self) } }

  // MARK: Stopping

  /// Asks a long-running command (`watch`) to stop; set by SIGINT/SIGTERM or by a test.
  func requestStop() { stopFlag.store(true, ordering: .releasing) }

  /// Whether ``requestStop()`` was called.
  var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

  // MARK: Helpers

  /// `write(2)` until everything is written; gives up silently on a closed pipe or another error.
  private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count, let base = buffer.baseAddress {
        let written = posixWrite(descriptor, base + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }
}

/// `write(2)`, out of reach of ``Console``'s own `write` methods.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}
