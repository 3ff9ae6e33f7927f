/// The token returned by ``ScopeLifecycle/observeState(_:)``: one registered state callback.
///
/// The callback and the last state it received sit behind a lock, so ``cancel()`` is callable from any
/// thread. The scope calls ``deliver(_:)`` on the main actor; the lock is released before the callback runs.
///
/// Once ``cancel()`` has returned, no delivery begins. A delivery the main actor had already begun when
/// another thread called ``cancel()`` may still finish (no lock is held while user code runs, so it cannot be
/// interrupted). Cancelling releases the callback, and everything it captured, at once.
final class LifecycleStateObservation: Cancellable, Sendable {
  private struct Storage {
    var onChange: (@MainActor (LifecycleState) -> Void)?
    var lastDelivered: LifecycleState?
  }

  private let storage: Locked<Storage>

  init(_ onChange: @escaping @MainActor (LifecycleState) -> Void) {
    storage = Locked(Storage(onChange: onChange, lastDelivered: nil))
  }

  /// Whether the observation was cancelled or its scope ended.
  var isCancelled: Bool { storage.withLock { $0.onChange == nil } }

  /// Calls the callback with `state` unless it was cancelled or already received `state` last.
  @MainActor func deliver(_ state: LifecycleState) {
    let callback: (@MainActor (LifecycleState) -> Void)? = storage.withLock { storage in
      guard let onChange = storage.onChange, storage.lastDelivered != state else { return nil }
      storage.lastDelivered = state
      return onChange
    }
    callback?(state)
  }

  /// Makes the next delivery call the callback even if it carries the state delivered last.
  ///
  /// For a LiveData observer that was deactivated between two notifications of its scope (because the
  /// scope had already left `.active` when a value arrived): whichever state the scope reports next, the
  /// observer hears of it and catches up if that state is `.active`.
  func forgetLastDelivered() {
    storage.withLock { $0.lastDelivered = nil }
  }

  /// Stops deliveries and releases the callback. Idempotent; callable from any thread.
  func cancel() {
    // Take the closure out under the lock, release it outside: its captures may run deinits.
    let released = storage.withLock { storage in
      let onChange = storage.onChange
      storage.onChange = nil
      return onChange
    }
    _ = released
  }
}
