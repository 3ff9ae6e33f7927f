import Foundation
import PersistentLiveData

extension AsyncSequence where Self: Sendable, Element: Sendable {
  /// The next `count` elements of a new iteration of the sequence, waiting at most `timeout` for them.
  ///
  /// Works with ``PersistentLiveData/LiveData/values`` (an `AsyncStream`), with
  /// ``PersistentLiveData/PersistentLiveData/changes(since:)`` (an `AsyncThrowingStream`) and with any
  /// other sendable sequence. Each call starts a new iteration: for `values` it begins with the current
  /// value, for `changes(since:)` with the first version after `since`.
  ///
  /// ```swift
  /// import PersistentLiveData
  /// import PersistentLiveDataTesting
  /// import Testing
  ///
  /// @Test func recordsEveryVersion() async throws {
  ///   let store = try PersistentStore.inMemory()
  ///   let count = try store.liveData("count", default: 0)
  ///   try count.set(1)
  ///   try count.set(2)
  ///   let versions = try await count.changes(since: 0).next(2, timeout: .seconds(2))
  ///   #expect(versions.map(\.value) == [1, 2])
  ///   #expect(try await count.values.next(1, timeout: .seconds(2)) == [2])
  /// }
  /// ```
  ///
  /// The iteration runs in a child task that the call cancels and awaits before it returns or throws, so
  /// nothing keeps iterating afterwards. A sequence that ignores cancellation therefore delays the return
  /// past `timeout` until it produces its next element or ends; `AsyncStream`, `AsyncThrowingStream` and
  /// the sequences of this library stop at once. Cancelling finishes an `AsyncStream` or
  /// `AsyncThrowingStream` for good: after a timeout, ask `values` or `changes(since:)` for a new one. A
  /// call that got all its elements cancels nothing, so the next call on the same stream continues where
  /// it stopped:
  ///
  /// ```swift
  /// let changes = count.changes(since: 0)
  /// let first = try await changes.next(2, timeout: .seconds(2))   // versions 1 and 2
  /// let then = try await changes.next(1, timeout: .seconds(2))    // version 3
  /// ```
  ///
  /// - Parameters:
  ///   - count: How many elements to wait for; 0 or less returns `[]` without iterating.
  ///   - timeout: How long to wait at most for all of them.
  ///   - fileID: The caller's `#fileID`, for the error; leave the default.
  ///   - filePath: The caller's `#filePath`, for the error; leave the default.
  ///   - line: The caller's `#line`, for the error; leave the default.
  ///   - column: The caller's `#column`, for the error; leave the default.
  /// - Returns: Exactly `count` elements, in the order the sequence produced them.
  /// - Throws: ``AsyncWaitError`` with reason ``AsyncWaitError/Reason/tooFewElements(received:expected:)``
  ///   when fewer arrived within `timeout`, or ``AsyncWaitError/Reason/sequenceEnded(received:expected:)``
  ///   when the sequence finished before `count`; the error the sequence threw; `CancellationError`
  ///   when the calling task is cancelled.
  public func next(
    _ count: Int,
    timeout: Duration,
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: Int = #line,
    column: Int = #column
  ) async throws -> [Element] {
    guard count > 0 else { return [] }
    let received = ReceivedElements<Element>()
    let (outcome, elements) = try await withThrowingTaskGroup(of: IterationOutcome.self) { group in
      group.addTask {
        var iterator = self.makeAsyncIterator()
        while received.count < count {
          guard let element = try await iterator.next() else { return .ended }
          received.append(element)
        }
        return .complete
      }
      group.addTask {
        try await Task.sleep(for: timeout)
        return .timedOut
      }
      defer { group.cancelAll() }
      // The first child to finish decides; the other is cancelled and awaited when the group ends.
      do {
        let outcome = try await group.next() ?? .ended
        // Taken now: what arrived within the timeout, not what the cancelled iteration may still add.
        return (outcome, received.elements)
      } catch {
        // The sequence's own error, unless the caller was cancelled (the sleep then threw).
        if Task.isCancelled { throw CancellationError() }
        throw error
      }
    }
    if outcome == .complete { return elements }
    try Task.checkCancellation()
    let reason: AsyncWaitError.Reason =
      outcome == .timedOut
      ? .tooFewElements(received: elements.count, expected: count)
      : .sequenceEnded(received: elements.count, expected: count)
    throw AsyncWaitError(
      reason: reason, timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }
}

/// How the race between the iteration and the timer ended.
private enum IterationOutcome: Sendable {
  case complete, ended, timedOut
}

/// The elements the iterating child task has received so far, readable by the caller when the timer wins.
///
/// Guarded by the library's `Locked` (a pthread mutex) rather than `Synchronization.Mutex`, like the
/// library's own locked state: Linux's ThreadSanitizer follows pthread locks.
private final class ReceivedElements<Element: Sendable>: Sendable {
  private let received = Locked<[Element]>([])

  var count: Int { received.withLock { $0.count } }

  var elements: [Element] { received.withLock { $0 } }

  func append(_ element: Element) { received.withLock { $0.append(element) } }
}
