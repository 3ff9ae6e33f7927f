/// Wakes the tasks waiting for a store's next commit, without missing one.
///
/// A generation counter makes waiting race-free: a reader notes ``generation``, looks for new rows, and
/// if there are none waits for a generation *after* the one it noted — a commit signalled between the
/// look and the wait ends the wait at once. Backend-neutral: the SQLite store signals after its own
/// commits and after noticing another process's; a shared store signals for other replicas' writes.
///
/// ```swift
/// let signal = ChangeSignal()
/// let seen = signal.generation
/// if try readNewRows().isEmpty {
///   guard await signal.wait(after: seen) else { return nil }   // closed, or the task was cancelled
/// }
/// ```
package final class ChangeSignal: Sendable {
  private struct State {
    var generation: UInt64 = 0
    var isClosed = false
    var nextWaiter: UInt64 = 0
    var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
  }

  private let state = Locked(State())

  package init() {}

  /// Increases with every ``signal()``.
  package var generation: UInt64 { state.withLock { $0.generation } }

  /// Records a change and wakes every waiter. Cheap when nobody waits.
  package func signal() {
    let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
      state.generation &+= 1
      defer { state.waiters.removeAll() }
      return Array(state.waiters.values)
    }
    for continuation in woken { continuation.resume(returning: true) }
  }

  /// Wakes every waiter for good: later waits return false at once. Idempotent.
  package func close() {
    let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
      state.isClosed = true
      defer { state.waiters.removeAll() }
      return Array(state.waiters.values)
    }
    for continuation in woken { continuation.resume(returning: false) }
  }

  /// Suspends until the generation passes `seen`.
  ///
  /// - Returns: true when it did; false when the signal is closed or the calling task is cancelled.
  package func wait(after seen: UInt64) async -> Bool {
    let id = state.withLock { state -> UInt64 in
      defer { state.nextWaiter &+= 1 }
      return state.nextWaiter
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let immediate: Bool? = state.withLock { state in
          if state.isClosed { return false }
          if state.generation != seen { return true }
          if Task.isCancelled { return false }
          state.waiters[id] = continuation
          return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
      }
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
    }
  }
}

extension ChangeSignal {
  /// Waits until `condition` holds, checking it after every signal; returns early when the signal is
  /// closed or the calling task is cancelled.
  ///
  /// ```swift
  /// await idle.wait(until: { queue.isEmpty })
  /// ```
  package func wait(until condition: () -> Bool) async {
    while true {
      let seen = generation
      if condition() { return }
      guard await wait(after: seen) else { return }
    }
  }
}
