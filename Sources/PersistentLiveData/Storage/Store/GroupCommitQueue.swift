internal import Dispatch

/// The queue of ``PersistentStore/write(_:)`` calls and the writer that commits them in groups.
///
/// A call enqueues its body and suspends; it never blocks its thread on the store. The writer — a serial
/// dispatch queue of the store — takes every call waiting at that moment, runs their bodies in one
/// transaction, each inside a savepoint of its own, and commits once: one sync for the whole group
/// (group commit, as PostgreSQL and MySQL do). Calls that arrive while a group commits form the next one.
///
/// After a group of several calls, the writer waits a moment — until as many calls are waiting again, at
/// most ``gatherLimit`` — before taking the next group: the callers it just resumed need a little CPU to
/// come back with their next write, and a writer that took only the first of them would pay a whole sync
/// for one call, then another for the rest (PostgreSQL's `commit_delay` does the same for the same
/// reason). A lone caller never waits: the writer waits only after a group of several.
///
/// ```swift
/// let queue = GroupCommitQueue()
/// queue.enqueue(request) { batch in database.commitGroup(batch) }
/// ```
final class GroupCommitQueue: Sendable {
  /// One `write` call: its body and how to report its outcome.
  struct Request: Sendable {
    let id: UInt64
    /// Runs the body (under the store's lock, inside the call's savepoint) and keeps its result.
    let run: @Sendable () throws -> Void
    /// Resumes the caller: with its result when `error` is nil, otherwise with `error`.
    let finish: @Sendable (_ error: (any Error)?) -> Void
  }

  /// The longest the writer waits for the callers of its last group to come back.
  static let gatherLimit = DispatchTimeInterval.microseconds(250)

  private struct State {
    var pending: [Request] = []
    var isDraining = false
    /// While the writer gathers: how many waiting calls end the wait (0: not gathering).
    var gatherTarget = 0
    var closedError: (any Error)?
    var nextID: UInt64 = 0
    var groups = 0
    var calls = 0
  }

  private let state = Locked(State())
  private let writer = DispatchQueue(label: "PersistentLiveData.writer")
  /// Signalled once when the calls the writer gathers for have arrived.
  private let gathered = DispatchSemaphore(value: 0)

  /// How many calls wait for the writer to take them.
  var pendingCount: Int { state.withLock { $0.pending.count } }

  /// How many groups the writer took, and how many calls they held: calls per group is the saving.
  var statistics: (groups: Int, calls: Int) { state.withLock { ($0.groups, $0.calls) } }

  /// A fresh request identifier.
  func makeID() -> UInt64 {
    state.withLock { state in
      defer { state.nextID &+= 1 }
      return state.nextID
    }
  }

  /// Adds `request` to the next group; starts the writer if it is idle. `commit` runs on the writer,
  /// one group at a time, in the order the calls arrived.
  func enqueue(_ request: Request, commit: @escaping @Sendable ([Request]) -> Void) {
    let outcome = state.withLock { state -> (start: Bool, refused: (any Error)?, gathered: Bool) in
      if let closedError = state.closedError { return (false, closedError, false) }
      state.pending.append(request)
      if state.gatherTarget > 0, state.pending.count >= state.gatherTarget {
        state.gatherTarget = 0
        return (false, nil, true)
      }
      guard !state.isDraining else { return (false, nil, false) }
      state.isDraining = true
      return (true, nil, false)
    }
    if let refused = outcome.refused {
      request.finish(refused)
    } else if outcome.start {
      writer.async { [self] in drain(commit) }
    } else if outcome.gathered {
      gathered.signal()
    }
  }

  /// Takes a waiting call out of the queue if no group has taken it yet, finishing it with `error`.
  /// A call already taken commits (or fails) with its group.
  func withdraw(_ id: UInt64, with error: any Error) {
    let withdrawn = state.withLock { state -> Request? in
      guard let index = state.pending.firstIndex(where: { $0.id == id }) else { return nil }
      return state.pending.remove(at: index)
    }
    withdrawn?.finish(error)
  }

  /// Refuses later calls with `error` and fails the ones still waiting; a group already committing
  /// finishes first (its calls then get the store's answer).
  func close(with error: any Error) {
    let waiting = state.withLock { state -> [Request] in
      state.closedError = error
      defer { state.pending.removeAll() }
      return state.pending
    }
    for request in waiting { request.finish(error) }
  }

  private func drain(_ commit: @Sendable ([Request]) -> Void) {
    var lastGroup = 0
    while true {
      if lastGroup > 1 { gather(lastGroup) }
      let batch = state.withLock { state -> [Request] in
        if state.pending.isEmpty {
          state.isDraining = false
        } else {
          state.groups += 1
          state.calls += state.pending.count
        }
        defer { state.pending.removeAll(keepingCapacity: true) }
        return state.pending
      }
      guard !batch.isEmpty else { return }
      commit(batch)
      lastGroup = batch.count
    }
  }

  /// Waits until `count` calls are waiting, at most ``gatherLimit`` (on the writer, between groups).
  private func gather(_ count: Int) {
    let mustWait = state.withLock { state -> Bool in
      guard state.pending.count < count, state.closedError == nil else { return false }
      state.gatherTarget = count
      return true
    }
    guard mustWait else { return }
    if gathered.wait(timeout: .now() + Self.gatherLimit) == .timedOut {
      // The signal may have been sent after the timeout: take it back, so the next wait waits.
      let signalled = state.withLock { state -> Bool in
        defer { state.gatherTarget = 0 }
        return state.gatherTarget == 0
      }
      if signalled { gathered.wait() }
    }
  }
}
