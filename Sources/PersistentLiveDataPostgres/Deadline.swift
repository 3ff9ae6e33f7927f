import PersistentLiveData

/// Runs `body` and gives up after `timeout`, throwing ``SharedStoreError/timedOut(operation:after:)``.
///
/// A call sent just as the server restarts can hang far longer than any caller should wait, and a task
/// group would wait for it. So `body` runs in a task of its own: the deadline (or the caller's
/// cancellation) cancels it and returns at once, and the abandoned call ends whenever the driver lets it.
///
/// ```swift
/// let rows = try await withDeadline(options.operationTimeout, operation: "history") {
///   try await statements.history(key: key, limit: 10)
/// }
/// ```
func withDeadline<Result: Sendable>(
  _ timeout: Duration, operation: String, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
  let race = DeadlineRace<Result>()
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
      race.begin(continuation)
      let work = Task {
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        race.finish(with: outcome)
      }
      let timer = Task {
        try? await Task.sleep(for: timeout)
        if !Task.isCancelled {
          race.finish(with: .failure(SharedStoreError.timedOut(operation: operation, after: timeout)))
        }
      }
      race.onFinish {
        work.cancel(); timer.cancel()
      }
    }
  } onCancel: {
    race.finish(with: .failure(CancellationError()))
  }
}

/// Who finishes first: the call, its deadline or the caller's cancellation. The continuation is resumed
/// once; the losers are cancelled.
private final class DeadlineRace<Result: Sendable>: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Result, any Error>?
    var early: Swift.Result<Result, any Error>?
    var cleanup: (@Sendable () -> Void)?
    var isFinished = false
  }

  private let state = Locked(State())

  func begin(_ continuation: CheckedContinuation<Result, any Error>) {
    let early = state.withLock { state -> Swift.Result<Result, any Error>? in
      if let early = state.early { return early }
      state.continuation = continuation
      return nil
    }
    if let early { continuation.resume(with: early) }
  }

  func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
    let finished = state.withLock { state -> Bool in
      if state.isFinished { return true }
      state.cleanup = cleanup
      return false
    }
    if finished { cleanup() }
  }

  func finish(with outcome: Swift.Result<Result, any Error>) {
    let (continuation, cleanup) = state.withLock {
      state -> (CheckedContinuation<Result, any Error>?, (@Sendable () -> Void)?) in
      guard !state.isFinished else { return (nil, nil) }
      state.isFinished = true
      if state.continuation == nil { state.early = outcome }
      defer { state.continuation = nil; state.cleanup = nil }
      return (state.continuation, state.cleanup)
    }
    continuation?.resume(with: outcome)
    cleanup?()
  }
}
