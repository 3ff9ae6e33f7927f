import PersistentLiveData
import PersistentLiveDataTesting
import Testing

/// `waitUntil(timeout:)`: returns as soon as the condition holds, on the caller's isolation, and fails
/// with an `AsyncWaitError` that names the timeout and the caller when it does not hold in time.
@Suite struct WaitUntilTests {
  @MainActor
  @Test func returnsAtOnceWhenTheConditionAlreadyHolds() async throws {
    let checks = CallCounter()
    let started = ContinuousClock.now
    try await waitUntil(timeout: .seconds(30), pollInterval: .seconds(10)) {
      checks.increment()
      return true
    }
    #expect(checks.value == 1, "checked once, before any pause")
    #expect(ContinuousClock.now - started < .seconds(5), "no pause of pollInterval before the first check")
  }

  @MainActor
  @Test func returnsWhenMainActorStateBecomesTrueLater() async throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    let owner = TestLifecycleOwner()
    var shown: [Int] = []
    count.observe(owner: owner) { shown.append($0) }
    owner.activate()
    let writer = Task.detached {
      for _ in 1...3 {
        try await Task.sleep(for: .milliseconds(20))
        try count.update { $0 += 1 }
      }
    }
    let started = ContinuousClock.now
    // Main-actor state (an observer's record): the condition runs on the test's actor.
    try await waitUntil(timeout: .seconds(300)) { shown.last == 3 }
    #expect(ContinuousClock.now - started < .seconds(240), "returned when it held, not at the timeout")
    #expect(count.value == 3)
    #expect(shown.first == 0 && shown.last == 3)
    try await writer.value
  }

  @Test func nonisolatedCallerWaitsForAValueWrittenLater() async throws {
    let store = try PersistentStore.inMemory()
    let flag = try store.liveData("flag", default: false)
    let checks = CallCounter()
    let writer = Task.detached {
      try await Task.sleep(for: .milliseconds(100))
      try flag.set(true)
    }
    try await waitUntil(timeout: .seconds(300)) {
      checks.increment()
      return flag.value
    }
    #expect(flag.value)
    #expect(checks.value > 1, "it kept checking until the write arrived")
    try await writer.value
  }

  @Test func conditionRunsOnTheCallingActor() async throws {
    let gauge = Gauge()
    let filler = Task {
      for _ in 1...5 {
        try await Task.sleep(for: .milliseconds(10))
        await gauge.raise()
      }
    }
    let level = try await gauge.waitForLevel(5)
    #expect(level == 5)
    try await filler.value
  }

  @Test func throwsAfterTheTimeoutWhenTheConditionNeverHolds() async throws {
    let checks = CallCounter()
    let started = ContinuousClock.now
    let callLine = #line + 2
    let error = await thrownAsyncWaitError {
      try await waitUntil(timeout: .milliseconds(300)) {
        checks.increment()
        return false
      }
    }
    let elapsed = ContinuousClock.now - started
    #expect(elapsed >= .milliseconds(300), "it waited the whole timeout")
    #expect(elapsed < .seconds(240), "and not much longer")
    #expect(checks.value >= 2, "checked at once and at the deadline (between pauses too, load permitting)")
    #expect(error?.reason == .conditionNotMet)
    #expect(error?.timeout == .milliseconds(300))
    #expect(error?.fileID == #fileID)
    #expect(error?.filePath == #filePath)
    #expect(error?.line == callLine)
    #expect(
      error?.description
        == "waitUntil: the condition was still false after the timeout of 0.3 seconds (at \(#fileID):\(callLine))"
    )
  }

  @Test func rethrowsWhatTheConditionThrows() async throws {
    let checks = CallCounter()
    await #expect(throws: ConditionFailure(code: 7)) {
      try await waitUntil(timeout: .seconds(30)) {
        checks.increment()
        if checks.value == 2 { throw ConditionFailure(code: 7) }
        return false
      }
    }
    #expect(checks.value == 2, "the error ends the wait")
  }

  @Test func cancellingTheCallerEndsTheWait() async throws {
    let checks = CallCounter()
    let waiter = Task {
      try await waitUntil(timeout: .seconds(60)) {
        checks.increment()
        return false
      }
    }
    try await waitUntil(timeout: .seconds(300)) { checks.value > 0 }
    let cancelled = ContinuousClock.now
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(ContinuousClock.now - cancelled < .seconds(240), "ended by the cancellation, not the timeout")
  }
}

/// A thread-safe count of calls.
final class CallCounter: Sendable {
  private let count = Locked(0)

  /// Adds one.
  func increment() { count.withLock { $0 += 1 } }

  /// The count so far.
  var value: Int { count.withLock { $0 } }
}

/// The `AsyncWaitError` that `body` throws; an issue when it throws nothing or another error.
///
/// Unlike `#expect(throws:)`, which is a macro, a plain closure keeps each line's `#line`: the error's
/// location can be compared with the line of the call.
func thrownAsyncWaitError(
  sourceLocation: SourceLocation = #_sourceLocation, isolation: isolated (any Actor)? = #isolation,
  _ body: () async throws -> Void
) async -> AsyncWaitError? {
  do {
    try await body()
    Issue.record("expected an AsyncWaitError, nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as AsyncWaitError {
    return error
  } catch {
    Issue.record("expected an AsyncWaitError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// An error a condition throws.
private struct ConditionFailure: Error, Equatable {
  let code: Int
}

/// Actor-isolated state that `waitUntil` reads from inside the actor.
private actor Gauge {
  private var level = 0

  func raise() { level += 1 }

  /// Waits on this actor for `target`; the condition reads `level` synchronously, which compiles only
  /// because it runs isolated to this actor.
  func waitForLevel(_ target: Int) async throws -> Int {
    try await waitUntil(timeout: .seconds(300)) { level >= target }
    return level
  }
}
