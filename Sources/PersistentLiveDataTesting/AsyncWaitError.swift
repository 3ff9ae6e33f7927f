/// Why ``waitUntil(timeout:pollInterval:fileID:filePath:line:column:isolation:_:)`` or
/// `AsyncSequence.next(_:timeout:fileID:filePath:line:column:)` gave up, and where it was called.
///
/// Its ``description`` names what was awaited, the timeout and the caller's source location, so a test
/// that lets it propagate fails with a readable message under swift-testing and XCTest alike:
///
/// ```swift
/// do {
///   try await waitUntil(timeout: .milliseconds(100)) { false }
/// } catch let error as AsyncWaitError {
///   error.reason        // .conditionNotMet
///   error.timeout       // .milliseconds(100)
///   error.description
///   // "waitUntil: the condition was still false after the timeout of 0.1 seconds (at MyTests/CartTests.swift:12)"
/// }
/// ```
///
/// The location fields mirror swift-testing's `SourceLocation`, so a test can record the failure where
/// the helper was called:
///
/// ```swift
/// Issue.record(
///   error,
///   sourceLocation: SourceLocation(
///     fileID: error.fileID, filePath: error.filePath, line: error.line, column: error.column))
/// ```
public struct AsyncWaitError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What did not happen.
  ///
  /// ```swift
  /// switch error.reason {
  /// case .conditionNotMet: break
  /// case .tooFewElements(let received, let expected): print("\(received) of \(expected) in time")
  /// case .sequenceEnded(let received, let expected): print("ended after \(received) of \(expected)")
  /// }
  /// ```
  public enum Reason: Sendable, Hashable {
    /// The condition passed to `waitUntil` was still false when the timeout expired.
    ///
    /// ```swift
    /// try await waitUntil(timeout: .milliseconds(50)) { false }   // throws .conditionNotMet
    /// ```
    case conditionNotMet
    /// The sequence produced only `received` of the `expected` elements before the timeout expired.
    ///
    /// ```swift
    /// let (stream, _) = AsyncStream<Int>.makeStream()
    /// _ = try await stream.next(2, timeout: .milliseconds(50))   // throws .tooFewElements(received: 0, expected: 2)
    /// ```
    case tooFewElements(received: Int, expected: Int)
    /// The sequence finished after `received` of the `expected` elements.
    ///
    /// ```swift
    /// let (stream, continuation) = AsyncStream<Int>.makeStream()
    /// continuation.yield(1)
    /// continuation.finish()
    /// _ = try await stream.next(2, timeout: .seconds(1))   // throws .sequenceEnded(received: 1, expected: 2)
    /// ```
    case sequenceEnded(received: Int, expected: Int)
  }

  /// What did not happen.
  ///
  /// ```swift
  /// #expect(error.reason == .tooFewElements(received: 1, expected: 3))
  /// ```
  public var reason: Reason
  /// The timeout the caller gave.
  ///
  /// ```swift
  /// #expect(error.timeout == .seconds(2))
  /// ```
  public var timeout: Duration
  /// The `#fileID` of the call that gave up, such as `"MyAppTests/CartTests.swift"`.
  ///
  /// ```swift
  /// #expect(error.fileID == #fileID)
  /// ```
  public var fileID: String
  /// The `#filePath` of the call that gave up.
  ///
  /// ```swift
  /// #expect(error.filePath == #filePath)
  /// ```
  public var filePath: String
  /// The line of the call that gave up.
  ///
  /// ```swift
  /// print("failed at line \(error.line)")
  /// ```
  public var line: Int
  /// The column of the call that gave up.
  ///
  /// ```swift
  /// print("failed at \(error.line):\(error.column)")
  /// ```
  public var column: Int

  /// Creates an error; the helpers of this module create them, tests of other helpers may too.
  ///
  /// ```swift
  /// let error = AsyncWaitError(reason: .conditionNotMet, timeout: .seconds(1))
  /// ```
  /// - Parameters:
  ///   - reason: What did not happen.
  ///   - timeout: The timeout the caller gave.
  ///   - fileID: The caller's `#fileID`.
  ///   - filePath: The caller's `#filePath`.
  ///   - line: The caller's `#line`.
  ///   - column: The caller's `#column`.
  public init(
    reason: Reason, timeout: Duration,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.reason = reason
    self.timeout = timeout
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  /// What was awaited, the timeout and where, in one sentence.
  ///
  /// ```swift
  /// error.description
  /// // "next(3): 1 of 3 elements arrived within the timeout of 2.0 seconds (at MyTests/CartTests.swift:40)"
  /// ```
  public var description: String {
    let location = "(at \(fileID):\(line))"
    switch reason {
    case .conditionNotMet:
      return "waitUntil: the condition was still false after the timeout of \(timeout) \(location)"
    case .tooFewElements(let received, let expected):
      return "next(\(expected)): \(received) of \(expected) elements arrived within the timeout of "
        + "\(timeout) \(location)"
    case .sequenceEnded(let received, let expected):
      return "next(\(expected)): the sequence ended after \(received) of \(expected) elements "
        + "\(location)"
    }
  }
}
