internal import Dispatch
internal import Synchronization

/// The queue of ``PersistentStore/write(_:)`` calls and the writer that commits them in groups.
///
/// A call enqueues its body and suspends; it never blocks its thread on the store. The writer — a serial
/// dispatch queue of the store — takes every call waiting at that moment, runs their bodies in one
/// transaction, each inside a savepoint of its own, and commits once: one sync for the whole group
/// (group commit, as PostgreSQL and MySQL do). Calls that arrive while a group commits form the next one.
///
/// After a group of several calls the writer does not commit the first caller back on its own: the callers
/// it just resumed need a little CPU to come back with their next write, and a writer that took only the
/// first of them would pay a whole sync for one call, then another for the rest. It begins the next
/// transaction with the calls waiting, runs each later call's body as it arrives, and commits when as
/// many calls have joined as the last group held (with the calls that waited during its commit), or at
/// ``gatherLimit``. Meanwhile it yields its thread rather than sleeping: a sleeping writer costs a wake-up
/// per arrival, longer on a loaded machine than the body it waits for. A lone caller never waits: the
/// writer gathers only after a group of several. (PostgreSQL's `commit_delay` waits for the same reason.)
///
/// ```swift
/// let queue = GroupCommitQueue()
/// queue.enqueue(request) { calls, joining, committed in
///   database.commitGroup(calls, joining: joining, committed: committed)
/// }
/// ```
final class GroupCommitQueue: Sendable {
  /// One `write` call: what it writes and how to report its outcome.
  struct Request: Sendable {
    /// What a call brings to the writer.
    enum Work: Sendable {
      /// One value, prepared (encoded, attributed) by the caller (``PersistentLiveData/write(_:)``): the
      /// writer inserts it itself, with no savepoint of its own and no call back into the live value.
      case value(PendingWrite)
      /// A ``PersistentStore/write(_:)`` body: user code, run inside a savepoint of its own; it keeps its
      /// result.
      case body(@Sendable () throws -> Void)
    }

    let id: UInt64
    let work: Work
    /// Resumes the caller: with its result when `error` is nil, otherwise with `error`.
    let finish: @Sendable (_ error: (any Error)?) -> Void
  }

  /// The longest the writer waits for the callers of its last group to come back, in nanoseconds.
  static let gatherLimit: UInt64 = 250_000

  private struct State {
    var pending: [Request] = []
    var isDraining = false
    var closedError: (any Error)?
    var nextID: UInt64 = 0
    var groups = 0
    var calls = 0
  }

  private let state = Locked(State())
  /// How many calls wait, readable without the lock: the writer polls it while it gathers, and a poll
  /// that took the lock would make every arriving caller wait for it.
  private let waiting = Atomic<Int>(0)
  private let writer = DispatchQueue(label: "PersistentLiveData.writer")

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

  /// How the writer commits a group: `commit(calls, joining, committed)` runs `calls`, then the calls
  /// `joining()` returns until it returns none, in one transaction; calls `committed()` once the
  /// transaction has ended (committed or not), before it resumes any caller.
  typealias Commit =
    @Sendable (
      _ calls: [Request], _ joining: () -> [Request], _ committed: () -> Void
    ) -> Void

  /// Adds `request` to the next group; starts the writer if it is idle. `commit` runs on the writer,
  /// one group at a time, in the order the calls arrived.
  func enqueue(_ request: Request, commit: @escaping Commit) {
    let outcome = state.withLock { state -> (start: Bool, refused: (any Error)?) in
      if let closedError = state.closedError { return (false, closedError) }
      state.pending.append(request)
      waiting.store(state.pending.count, ordering: .releasing)
      guard !state.isDraining else { return (false, nil) }
      state.isDraining = true
      return (true, nil)
    }
    if let refused = outcome.refused {
      request.finish(refused)
    } else if outcome.start {
      writer.async { [self] in drain(commit) }
    }
  }

  /// Takes a waiting call out of the queue if no group has taken it yet, finishing it with `error`.
  /// A call already taken commits (or fails) with its group.
  func withdraw(_ id: UInt64, with error: any Error) {
    let withdrawn = state.withLock { state -> Request? in
      guard let index = state.pending.firstIndex(where: { $0.id == id }) else { return nil }
      defer { waiting.store(state.pending.count, ordering: .releasing) }
      return state.pending.remove(at: index)
    }
    withdrawn?.finish(error)
  }

  /// Refuses later calls with `error` and fails the ones still waiting; a group already committing
  /// finishes first (its calls then get the store's answer).
  func close(with error: any Error) {
    let refused = state.withLock { state -> [Request] in
      state.closedError = error
      defer {
        state.pending.removeAll()
        waiting.store(0, ordering: .releasing)
      }
      return state.pending
    }
    for request in refused { request.finish(error) }
  }

  private func drain(_ commit: Commit) {
    var lastGroup = 0
    while true {
      // After a group of several, its callers are on their way back: wait for the first of them.
      var calls =
        lastGroup > 1
        ? takeYielding(until: Self.now() + Self.gatherLimit, startingGroup: true)
        : take(startingGroup: true)
      if calls.isEmpty { calls = take(startingGroup: true, stoppingIfNone: true) }
      guard !calls.isEmpty else { return }
      let expected = lastGroup
      var joined = calls.count
      var waitingAtCommit = 0
      let deadline = Self.now() + Self.gatherLimit
      commit(
        calls,
        {
          guard joined < expected else { return [] }
          let more = takeYielding(until: deadline, startingGroup: false)
          joined += more.count
          return more
        },
        { waitingAtCommit = pendingCount })
      lastGroup = joined + waitingAtCommit
    }
  }

  /// Takes the calls waiting, yielding the thread until one arrives or `deadline` passes (then none).
  private func takeYielding(until deadline: UInt64, startingGroup: Bool) -> [Request] {
    while true {
      if waiting.load(ordering: .acquiring) > 0 {
        let calls = take(startingGroup: startingGroup)
        if !calls.isEmpty { return calls }
      }
      if Self.now() >= deadline { return [] }
      POSIX.yieldThread()
    }
  }

  /// Takes every waiting call, counting them as a new group's (`startingGroup`) or as joining the
  /// current one. With `stoppingIfNone`, the writer stops when none is waiting (an `enqueue` starts it
  /// again).
  private func take(startingGroup: Bool, stoppingIfNone: Bool = false) -> [Request] {
    state.withLock { state -> [Request] in
      guard !state.pending.isEmpty else {
        if stoppingIfNone { state.isDraining = false }
        return []
      }
      if startingGroup { state.groups += 1 }
      state.calls += state.pending.count
      defer {
        state.pending.removeAll(keepingCapacity: true)
        waiting.store(0, ordering: .releasing)
      }
      return state.pending
    }
  }

  private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
