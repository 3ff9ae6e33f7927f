import Dispatch
import Foundation
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines on standard output, written at once (not buffered: a script or test reads them live).
enum Output {
  static func line(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
  }

  static func error(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }

  /// `by alice (INC-42)`: who wrote a version and why; `by unknown` when it records neither.
  static func attribution(_ attribution: WriteAttribution?) -> String {
    let author = attribution?.author ?? "unknown"
    return "by \(author)" + (attribution?.reason.map { " (\($0))" } ?? "")
  }

  /// Flags as compact JSON with sorted keys.
  static func json(_ flags: [String: Bool]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return (try? encoder.encode(flags)).map { String(decoding: $0, as: UTF8.self) } ?? "\(flags)"
  }
}

/// SIGINT and SIGTERM, turned from process-killing signals into an event the daemon awaits.
final class StopSignal {
  private let sources: [any DispatchSourceSignal]
  private let received = AsyncStream<String>.makeStream()

  init() {
    let continuation = received.continuation
    sources = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, name in
      signal(number, SIG_IGN)  // the dispatch source receives it instead
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { continuation.yield(name) }
      source.resume()
      return source
    }
  }

  /// Waits for a stop signal, or for `task` to end by itself (an error); returns what happened.
  func wait<Success: Sendable>(orUntil task: Task<Success, any Error>) async -> String {
    let continuation = received.continuation
    let watcher = Task {
      _ = try? await task.value
      continuation.yield("audit ended")
    }
    defer { watcher.cancel() }
    for await reason in received.stream { return reason }
    return "end of signals"
  }
}
