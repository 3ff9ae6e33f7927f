#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// State guarded by a lock, usable from any thread.
///
/// Built on a pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer follows pthread locks,
/// while on Linux it reports false races inside a contended `Mutex`, which would hide real ones. The
/// state and its mutex live in one allocation (`NSLock` was an object and a mutex of its own beside the
/// state's: three allocations for each live value's storage, its commit times, each `write` call). The
/// API mirrors `Mutex.withLock`; copies of a `Locked` share the state. Never call user code inside
/// `withLock`.
///
/// ```swift
/// let count = Locked(0)
/// count.withLock { $0 += 1 }
/// ```
package struct Locked<State>: @unchecked Sendable {
  private let buffer: LockedBuffer<State>

  package init(_ state: State) {
    buffer = LockedBuffer.make(state)
  }

  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    try buffer.withUnsafeMutablePointers { state, mutex in
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return try body(&state.pointee)
    }
  }
}

/// The state of a ``Locked`` (the header) and its mutex (the one element), in one allocation.
private final class LockedBuffer<State>: ManagedBuffer<State, pthread_mutex_t> {
  static func make(_ state: State) -> LockedBuffer<State> {
    let buffer = unsafeDowncast(create(minimumCapacity: 1) { _ in state }, to: LockedBuffer<State>.self)
    buffer.withUnsafeMutablePointerToElements { mutex in
      mutex.initialize(to: pthread_mutex_t())
      pthread_mutex_init(mutex, nil)
    }
    return buffer
  }

  deinit {
    withUnsafeMutablePointerToElements { mutex in
      pthread_mutex_destroy(mutex)
      _ = mutex.deinitialize(count: 1)
    }
  }
}
