import PersistentLiveDataBackend
import Synchronization

/// Runs `body` and gives up after `timeout`, throwing ``SharedStoreError/timedOut(operation:after:)``.
///
/// A call sent just as the server restarts can hang far longer than any caller should wait, and a task
/// group would wait for it. So `body` runs in a task of its own: the deadline (or the caller's
/// cancellation) cancels it and returns at once, and the abandoned call ends whenever the driver lets it.
/// The deadline itself is an entry in ``Deadlines``, which one task watches for every call in flight: a
/// timer task per call cost each write a task and a thread's wake-up.
///
/// `failFast`, when given, runs beside `body` in a task of its own: an error it returns ends the call at
/// once with that error (the connection probe, which learns why the pool's connections cannot be made
/// while `body` waits for one); nil lets `body` go on.
///
/// ```swift
/// let rows = try await withDeadline(options.operationTimeout, operation: "history") {
///   try await statements.history(key: key, limit: 10)
/// }
/// ```
func withDeadline<Result: Sendable>(
  _ timeout: Duration, operation: String, failFast: (@Sendable () async -> (any Error)?)? = nil,
  _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
  let race = DeadlineRace<Result>()
  return try await withTaskCancellationHandler {
    try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Result, any Error>) in
      race.begin(continuation)
      let work = Task {
        // The time counts from when the call starts running: a call still waiting for a thread (a
        // cooperative pool kept busy elsewhere) has not waited on the server yet.
        let deadline = Deadlines.shared.add(
          ContinuousClock.now + timeout, race: race, operation: operation, timeout: timeout)
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        Deadlines.shared.remove(deadline)
        race.finish(with: outcome, byTheCall: true)
      }
      let watcher = failFast.map { check in
        Task {
          if let error = await check() { race.finish(with: .failure(error)) }
        }
      }
      race.started(work, watcher)
    }
  } onCancel: {
    race.finish(with: .failure(CancellationError()))
  }
}

/// What ``Deadlines`` ends when a deadline passes: the race of one call, whatever its result type.
protocol DeadlineExpiring: Sendable {
  func expire(with error: any Error)
}

/// Who finishes first: the call, its deadline or the caller's cancellation. The continuation is resumed
/// once; the losers are cancelled.
///
/// One allocation per call: the state sits in the object (a `Mutex`, not a separately allocated lock),
/// the continuation is an unsafe one (`withDeadline` resumes it exactly once, here), and the tasks to
/// cancel are kept as they are, not in a closure.
private final class DeadlineRace<Result: Sendable>: DeadlineExpiring {
  private struct State {
    var continuation: UnsafeContinuation<Result, any Error>?
    var early: Swift.Result<Result, any Error>?
    var work: Task<Void, Never>?
    var watcher: Task<Void, Never>?
    var isFinished = false
  }

  private let state = Mutex(State())

  func begin(_ continuation: UnsafeContinuation<Result, any Error>) {
    let early = state.withLock { state -> Swift.Result<Result, any Error>? in
      if let early = state.early { return early }
      state.continuation = continuation
      return nil
    }
    if let early { continuation.resume(with: early) }
  }

  /// Records the call's task and its fail-fast watcher; cancels them at once if the race is already over.
  func started(_ work: Task<Void, Never>, _ watcher: Task<Void, Never>?) {
    let finished = state.withLock { state -> Bool in
      if state.isFinished { return true }
      state.work = work
      state.watcher = watcher
      return false
    }
    if finished {
      work.cancel()
      watcher?.cancel()
    }
  }

  func expire(with error: any Error) {
    finish(with: .failure(error))
  }

  /// Ends the race with `outcome` if it is still on; `byTheCall` when the call itself finished (its task
  /// needs no cancelling).
  func finish(with outcome: Swift.Result<Result, any Error>, byTheCall: Bool = false) {
    let (continuation, work, watcher) = state.withLock {
      state -> (UnsafeContinuation<Result, any Error>?, Task<Void, Never>?, Task<Void, Never>?) in
      guard !state.isFinished else { return (nil, nil, nil) }
      state.isFinished = true
      if state.continuation == nil { state.early = outcome }
      defer { state.continuation = nil; state.work = nil; state.watcher = nil }
      return (state.continuation, state.work, state.watcher)
    }
    continuation?.resume(with: outcome)
    if !byTheCall { work?.cancel() }
    watcher?.cancel()
  }
}

/// The deadlines of the calls in flight, and the one task that ends those that pass.
///
/// Adding and removing one is a lock and a dictionary entry. The watcher sleeps until the earliest
/// deadline; when that call finished in time, it looks again and sleeps until the next. A deadline
/// earlier than the one it sleeps for (a shorter timeout) starts a new watcher, and the old one ends.
///
/// ```swift
/// let id = Deadlines.shared.add(.now + .seconds(5), race: race, operation: "set", timeout: .seconds(5))
/// Deadlines.shared.remove(id)  // the call ended in time
/// ```
final class Deadlines: Sendable {
  static let shared = Deadlines()

  private struct Entry {
    let deadline: ContinuousClock.Instant
    let race: any DeadlineExpiring
    /// What the call's timeout error says.
    let operation: String
    let timeout: Duration
  }

  private struct State {
    var entries: [UInt64: Entry] = [:]
    var lastID: UInt64 = 0
    /// What the current watcher sleeps until, and its generation (nil: none runs).
    var wake: ContinuousClock.Instant?
    var generation: UInt64 = 0
    var watcher: Task<Void, Never>?
  }

  private let state = Locked(State())

  /// Ends `race` with ``SharedStoreError/timedOut(operation:after:)`` once `deadline` passed, unless
  /// ``remove(_:)`` came first; returns the entry's id. (The entry keeps the race and the error's words,
  /// not a closure: nothing is allocated for an error most calls never make.)
  func add(
    _ deadline: ContinuousClock.Instant, race: some DeadlineExpiring, operation: String, timeout: Duration
  ) -> UInt64 {
    state.withLock { state in
      state.lastID += 1
      state.entries[state.lastID] = Entry(
        deadline: deadline, race: race, operation: operation, timeout: timeout)
      if state.wake.map({ deadline < $0 }) ?? true { startWatcher(until: deadline, in: &state) }
      return state.lastID
    }
  }

  /// Forgets a deadline whose call ended.
  func remove(_ id: UInt64) {
    state.withLock { _ = $0.entries.removeValue(forKey: id) }
  }

  private func startWatcher(until wake: ContinuousClock.Instant, in state: inout State) {
    state.watcher?.cancel()
    state.generation += 1
    state.wake = wake
    let generation = state.generation
    state.watcher = Task { [self] in await watch(generation: generation, until: wake) }
  }

  private func watch(generation: UInt64, until first: ContinuousClock.Instant) async {
    var wake = first
    while true {
      try? await ContinuousClock().sleep(until: wake)
      let now = ContinuousClock.now
      let (expired, next) = state.withLock { state -> ([Entry], ContinuousClock.Instant?) in
        // A newer watcher took over.
        guard state.generation == generation else { return ([], nil) }
        var expired: [(id: UInt64, entry: Entry)] = []
        var next: ContinuousClock.Instant?
        for (id, entry) in state.entries {
          if entry.deadline <= now {
            expired.append((id, entry))
          } else if next.map({ entry.deadline < $0 }) ?? true {
            next = entry.deadline
          }
        }
        for (id, _) in expired { state.entries[id] = nil }
        state.wake = next
        if next == nil { state.watcher = nil }
        // In the order they passed (a starved watcher wakes late, to several at once).
        expired.sort { ($0.entry.deadline, $0.id) < ($1.entry.deadline, $1.id) }
        return (expired.map(\.entry), next)
      }
      for entry in expired {
        entry.race.expire(with: SharedStoreError.timedOut(operation: entry.operation, after: entry.timeout))
      }
      guard let next else { return }
      wake = next
    }
  }
}
