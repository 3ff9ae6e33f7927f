import Foundation

/// State guarded by a lock, usable from any thread.
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: ThreadSanitizer follows
/// pthread locks, while on Linux it reports false races inside a contended `Mutex`, which would hide real
/// ones. The API mirrors `Mutex.withLock`. Never call user code inside `withLock`.
package final class Locked<State>: @unchecked Sendable {
  private var state: State
  private let lock = NSLock()

  package init(_ state: State) {
    self.state = state
  }

  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&state)
  }
}
