/// Waits until `condition` holds, checking it every `pollInterval`, for at most `timeout`.
///
/// The condition runs on the caller's isolation: from a `@MainActor` test it can read main-actor state
/// (view models, ``TestLifecycleOwner``, what an observer recorded); between checks the caller's actor is
/// free, so pending deliveries run. It is checked at once, then after each interval, and a last time
/// when the timeout expires. It returns as soon as the condition holds.
///
/// ```swift
/// import PersistentLiveData
/// import PersistentLiveDataTesting
/// import Testing
///
/// @MainActor @Test func countsToThree() async throws {
///   let store = try PersistentStore.inMemory()
///   let count = try store.liveData("count", default: 0)
///   Task.detached { for _ in 1...3 { try count.update { $0 += 1 } } }
///   try await waitUntil(timeout: .seconds(2)) { count.value == 3 }
/// }
/// ```
///
/// The condition may be `async` and may throw, which ends the wait with its error:
///
/// ```swift
/// try await waitUntil(timeout: .seconds(2)) { await model.isLoaded }
/// ```
///
/// - Parameters:
///   - timeout: How long to wait at most.
///   - pollInterval: The time between checks; at least 1 ms. Default: 10 ms.
///   - fileID: The caller's `#fileID`, for the error; leave the default.
///   - filePath: The caller's `#filePath`, for the error; leave the default.
///   - line: The caller's `#line`, for the error; leave the default.
///   - column: The caller's `#column`, for the error; leave the default.
///   - isolation: The caller's isolation, filled in by the compiler: the condition runs there.
///   - condition: What to wait for.
/// - Throws: ``AsyncWaitError`` with reason ``AsyncWaitError/Reason/conditionNotMet`` when the condition is
///   still false after `timeout`; `CancellationError` when the calling task is cancelled; what
///   `condition` throws.
public func waitUntil(
  timeout: Duration,
  pollInterval: Duration = .milliseconds(10),
  fileID: String = #fileID,
  filePath: String = #filePath,
  line: Int = #line,
  column: Int = #column,
  isolation: isolated (any Actor)? = #isolation,
  _ condition: () async throws -> Bool
) async throws {
  let clock = ContinuousClock()
  let deadline = clock.now.advanced(by: timeout)
  let interval = max(pollInterval, .milliseconds(1))
  while true {
    if try await condition() { return }
    let now = clock.now
    if now >= deadline {
      throw AsyncWaitError(
        reason: .conditionNotMet, timeout: timeout, fileID: fileID, filePath: filePath, line: line,
        column: column)
    }
    try Task.checkCancellation()
    try await Task.sleep(until: min(now.advanced(by: interval), deadline), clock: clock)
  }
}
