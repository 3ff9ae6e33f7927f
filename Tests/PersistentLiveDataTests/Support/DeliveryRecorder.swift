import Testing

@testable import PersistentLiveData

/// Records the values an observer receives so a test can assert the exact sequence.
///
/// Exhaustive in the style of TCA's `TestStore`: every delivery must be asserted with ``expect(_:_:)``
/// (which consumes what it checked). Deliveries still unasserted when the recorder is released are reported
/// as a test issue, so a double or unexpected delivery cannot slip through a test that forgot to look.
///
/// Thread-safe: `record` may be called from any thread, so a wrong implementation that calls back off the
/// main actor is recorded (and caught by the assertions) rather than racing.
///
/// ```swift
/// let recorder = DeliveryRecorder<Int>()
/// liveData.observeForever(recorder.callback)
/// recorder.expect([0])
/// liveData.set(1)
/// recorder.expect([1])
/// ```
final class DeliveryRecorder<Value: Sendable & Equatable>: Sendable {
  private struct State {
    var all: [Value] = []
    var pending: [Value] = []
  }

  private let state = Locked(State())
  private let createdAt: SourceLocation

  init(sourceLocation: SourceLocation = #_sourceLocation) {
    createdAt = sourceLocation
  }

  deinit {
    let leftover = state.withLock { $0.pending }
    if !leftover.isEmpty {
      Issue.record(
        "DeliveryRecorder released with unasserted deliveries: \(leftover)", sourceLocation: createdAt)
    }
  }

  /// Records one delivery.
  func record(_ value: Value) {
    state.withLock {
      $0.all.append(value)
      $0.pending.append(value)
    }
  }

  /// An observer callback that records every value it receives.
  var callback: @MainActor @Sendable (Value) -> Void {
    { [self] value in record(value) }
  }

  /// Every delivery since creation, asserted or not.
  var all: [Value] { state.withLock { $0.all } }

  /// Deliveries not yet asserted.
  var pending: [Value] { state.withLock { $0.pending } }

  /// Number of deliveries since creation.
  var count: Int { state.withLock { $0.all.count } }

  /// Asserts that the unasserted deliveries are exactly `expected`, in order, and consumes them.
  func expect(
    _ expected: [Value], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let actual = state.withLock { state -> [Value] in
      let pending = state.pending
      state.pending = []
      return pending
    }
    #expect(actual == expected, comment, sourceLocation: sourceLocation)
  }

  /// Asserts that nothing was delivered since the last assertion.
  func expectNothing(_ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    expect([], comment, sourceLocation: sourceLocation)
  }

  /// Returns the unasserted deliveries and consumes them, for tests that check a property of the sequence
  /// (monotonic, coalesced) rather than its exact content.
  func takePending() -> [Value] {
    state.withLock { state -> [Value] in
      let pending = state.pending
      state.pending = []
      return pending
    }
  }

  /// Waits (bounded) until the latest delivery is `value`. Returns whether it arrived in time.
  ///
  /// Use for deliveries scheduled on the main actor from another isolation; the caller then asserts the
  /// sequence with ``expect(_:_:)`` or ``takePending()``.
  @discardableResult
  func waitForLast(
    _ value: Value, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation
  ) async -> Bool {
    let arrived = await eventually(timeout: timeout) { self.all.last == value }
    #expect(arrived, "value \(value) was not delivered in time; got \(all)", sourceLocation: sourceLocation)
    return arrived
  }
}

/// Polls `condition` until it holds or `timeout` passes, yielding between polls so that main-actor work
/// scheduled by the code under test can run. Never a fixed sleep: returns as soon as the condition holds.
///
/// The condition runs in the caller's isolation, so a `@MainActor` test can read main-actor state in it.
func eventually(
  isolation: isolated (any Actor)? = #isolation,
  timeout: Duration = .seconds(10),
  _ condition: () -> Bool
) async -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now.advanced(by: mainActorWaitLimit(timeout))
  while clock.now < deadline {
    if condition() { return true }
    await Task.yield()
    try? await Task.sleep(for: .milliseconds(1))
  }
  return condition()
}
