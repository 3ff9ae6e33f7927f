import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataTesting
import Testing

/// `AsyncSequence.next(_:timeout:)`: the next elements of `values`, `changes(since:)` or any sendable
/// sequence; an `AsyncWaitError` on timeout or early end, the sequence's own errors rethrown, and no
/// iteration left running when it returns.
@Suite struct AsyncSequenceNextTests {
  @Test func takesTheNextValuesOfALiveData() async throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    let done = Locked(false)
    // `values` keeps only the newest value for a slow consumer: write until three have been taken.
    let writer = Task.detached {
      while !done.withLock({ $0 }) {
        try await Task.sleep(for: .milliseconds(5))
        try count.update { $0 += 1 }
      }
    }
    let taken = try await count.values.next(3, timeout: .seconds(300))
    done.withLock { $0 = true }
    try await writer.value
    #expect(taken.count == 3)
    #expect(taken == taken.sorted() && Set(taken).count == 3, "in the order written, no repeats: \(taken)")
    #expect(taken.allSatisfy { $0 <= count.value })
  }

  @Test func valuesTimesOutWithOnlyTheCurrentValue() async throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    try count.set(5)
    let started = ContinuousClock.now
    let callLine = #line + 2
    let error = await thrownAsyncWaitError {
      _ = try await count.values.next(3, timeout: .milliseconds(300))
    }
    let elapsed = ContinuousClock.now - started
    #expect(elapsed >= .milliseconds(300), "it waited the whole timeout")
    #expect(elapsed < .seconds(240), "and not much longer")
    #expect(error?.reason == .tooFewElements(received: 1, expected: 3))
    #expect(error?.timeout == .milliseconds(300))
    #expect(error?.fileID == #fileID)
    #expect(error?.line == callLine)
    #expect(
      error?.description
        == "next(3): 1 of 3 elements arrived within the timeout of 0.3 seconds (at \(#fileID):\(callLine))")
  }

  @Test func changesDeliversVersionsWrittenBeforeAndAfter() async throws {
    let store = try PersistentStore.inMemory()
    let name = try store.liveData("name", default: "")
    try name.set("a")
    try name.set("b")
    let writer = Task.detached {
      try await Task.sleep(for: .milliseconds(100))
      try name.set("c")
      try name.set("d")
    }
    let changes = try await name.changes(since: 0).next(4, timeout: .seconds(300))
    try await writer.value
    #expect(changes.map(\.version) == [1, 2, 3, 4])
    #expect(changes.map(\.value) == ["a", "b", "c", "d"])
  }

  @Test func aCompleteCallLeavesTheStreamWhereItStopped() async throws {
    try await TemporaryDirectory.with("next") { directory in
      let store = try PersistentStore(path: directory.path("store.db"))
      let name = try store.liveData("name", default: "")
      try name.set("a")
      try name.set("b")
      let changes = name.changes(since: 0)
      let first = try await changes.next(1, timeout: .seconds(300))
      let writer = Task.detached {
        try await Task.sleep(for: .milliseconds(50))
        try name.set("c")
      }
      let then = try await changes.next(2, timeout: .seconds(300))
      try await writer.value
      #expect(first.map(\.value) == ["a"])
      #expect(then.map(\.version) == [2, 3])
      #expect(then.map(\.value) == ["b", "c"])
      try store.close()
    }
  }

  @Test func changesTimesOutWithFewerVersions() async throws {
    let store = try PersistentStore.inMemory()
    let name = try store.liveData("name", default: "")
    try name.set("a")
    try name.set("b")
    let started = ContinuousClock.now
    let error = await #expect(throws: AsyncWaitError.self) {
      try await name.changes(since: 0).next(3, timeout: .milliseconds(300))
    }
    let elapsed = ContinuousClock.now - started
    #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(240))
    #expect(error?.reason == .tooFewElements(received: 2, expected: 3))
    #expect(error?.description.contains("2 of 3 elements arrived within the timeout of 0.3 seconds") == true)
  }

  @Test func aSequenceThatEndsEarlyIsAnError() async throws {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    continuation.yield(1)
    continuation.finish()
    let started = ContinuousClock.now
    let callLine = #line + 2
    let error = await thrownAsyncWaitError {
      _ = try await stream.next(2, timeout: .seconds(60))
    }
    #expect(ContinuousClock.now - started < .seconds(240), "the end is reported at once, not at the timeout")
    #expect(error?.reason == .sequenceEnded(received: 1, expected: 2))
    #expect(
      error?.description == "next(2): the sequence ended after 1 of 2 elements (at \(#fileID):\(callLine))")
  }

  @Test func changesEndWhenTheStoreCloses() async throws {
    let store = try PersistentStore.inMemory()
    let name = try store.liveData("name", default: "")
    try name.set("a")
    let closer = Task.detached {
      try await Task.sleep(for: .milliseconds(100))
      try store.close()
    }
    let error = await #expect(throws: AsyncWaitError.self) {
      try await name.changes(since: 0).next(3, timeout: .seconds(60))
    }
    try await closer.value
    #expect(error?.reason == .sequenceEnded(received: 1, expected: 3))
  }

  @Test func rethrowsTheSequencesError() async throws {
    let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
    continuation.yield(1)
    continuation.finish(throwing: StreamFailure(code: 3))
    await #expect(throws: StreamFailure(code: 3)) {
      try await stream.next(2, timeout: .seconds(60))
    }
  }

  @Test func rethrowsAnErrorOfChanges() async throws {
    let store = try PersistentStore.inMemory(options: StoreOptions(retention: .last(1)))
    let name = try store.liveData("name", default: "")
    try name.set("a")
    try name.set("b")
    try name.set("c")  // versions 1 and 2 are pruned
    let error = await #expect(throws: PersistentLiveDataError.self) {
      try await name.changes(since: 1).next(2, timeout: .seconds(60))
    }
    guard case .changesPruned = error else {
      Issue.record("expected changesPruned, got \(String(describing: error))")
      return
    }
  }

  @Test func aTimeoutCancelsTheIteration() async throws {
    let probe = IterationProbe()
    let (stream, continuation) = probe.stream()
    continuation.yield(1)
    let error = await #expect(throws: AsyncWaitError.self) {
      try await ProbedStream(base: stream, probe: probe).next(3, timeout: .milliseconds(200))
    }
    #expect(error?.reason == .tooFewElements(received: 1, expected: 3))
    #expect(probe.iterations == 1)
    #expect(probe.waitingInNext == 0, "nothing is still waiting for an element")
    #expect(probe.wasCancelled, "the iteration was cancelled, which finished the stream")
    #expect(isTerminated(continuation.yield(2)))
  }

  @Test func aCompleteCallLeavesNothingIterating() async throws {
    let probe = IterationProbe()
    let (stream, continuation) = probe.stream()
    for value in 1...3 { continuation.yield(value) }
    let taken = try await ProbedStream(base: stream, probe: probe).next(2, timeout: .seconds(300))
    #expect(taken == [1, 2])
    #expect(probe.iterations == 1)
    #expect(probe.waitingInNext == 0)
    #expect(!probe.wasCancelled, "a call that got all it asked for cancels nothing")
  }

  @Test func cancellingTheCallerCancelsTheIteration() async throws {
    let probe = IterationProbe()
    let (stream, _) = probe.stream()
    let caller = Task {
      try await ProbedStream(base: stream, probe: probe).next(3, timeout: .seconds(60))
    }
    try await waitUntil(timeout: .seconds(300)) { probe.waitingInNext == 1 }
    let cancelled = ContinuousClock.now
    caller.cancel()
    await #expect(throws: CancellationError.self) { try await caller.value }
    #expect(ContinuousClock.now - cancelled < .seconds(240), "ended by the cancellation, not the timeout")
    #expect(probe.waitingInNext == 0)
    #expect(probe.wasCancelled)
  }

  @Test func zeroElementsReturnsAtOnceWithoutIterating() async throws {
    let probe = IterationProbe()
    let (stream, _) = probe.stream()
    let taken = try await ProbedStream(base: stream, probe: probe).next(0, timeout: .seconds(60))
    #expect(taken.isEmpty)
    #expect(probe.iterations == 0)
  }
}

/// An error a test sequence throws.
private struct StreamFailure: Error, Equatable {
  let code: Int
}

/// Whether a yield found the stream finished.
private func isTerminated(_ result: AsyncStream<Int>.Continuation.YieldResult) -> Bool {
  if case .terminated = result { return true }
  return false
}

/// What a ``ProbedStream`` saw: iterators made, calls of `next()` under way, cancellation of the stream.
private final class IterationProbe: Sendable {
  private struct State {
    var iterations = 0
    var waitingInNext = 0
    var cancelled = false
  }
  private let state = Locked(State())

  /// A stream whose cancellation the probe records.
  func stream() -> (AsyncStream<Int>, AsyncStream<Int>.Continuation) {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    continuation.onTermination = { [state] termination in
      if case .cancelled = termination { state.withLock { $0.cancelled = true } }
    }
    return (stream, continuation)
  }

  var iterations: Int { state.withLock { $0.iterations } }
  var waitingInNext: Int { state.withLock { $0.waitingInNext } }
  var wasCancelled: Bool { state.withLock { $0.cancelled } }

  func madeIterator() { state.withLock { $0.iterations += 1 } }
  func enteredNext() { state.withLock { $0.waitingInNext += 1 } }
  func leftNext() { state.withLock { $0.waitingInNext -= 1 } }
}

/// An `AsyncStream` that reports to a probe when it is iterated and while a `next()` is waiting.
private struct ProbedStream: AsyncSequence, Sendable {
  let base: AsyncStream<Int>
  let probe: IterationProbe

  struct AsyncIterator: AsyncIteratorProtocol {
    var base: AsyncStream<Int>.Iterator
    let probe: IterationProbe

    mutating func next() async -> Int? {
      probe.enteredNext()
      defer { probe.leftNext() }
      return await base.next()
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    probe.madeIterator()
    return AsyncIterator(base: base.makeAsyncIterator(), probe: probe)
  }
}
