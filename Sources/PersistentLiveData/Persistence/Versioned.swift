public import Foundation

/// One stored version of a value: what ``PersistentLiveData/history(limit:)`` returns.
///
/// ```swift
/// for entry in try settings.history(limit: 5) {
///   print(entry.version, entry.writtenAt, entry.value)
/// }
/// ```
public struct Versioned<Value: Sendable>: Sendable {
  /// The version number: 1 for the first write of a key, then 2, 3, …
  ///
  /// ```swift
  /// try settings.history().first?.version == settings.version   // true once something is written
  /// ```
  public let version: Int64
  /// The value as written.
  ///
  /// ```swift
  /// let previous = try settings.history(limit: 2).last?.value
  /// ```
  public let value: Value
  /// When the version was committed (millisecond precision).
  ///
  /// ```swift
  /// let age = Date().timeIntervalSince(entry.writtenAt)
  /// ```
  public let writtenAt: Date

  /// Creates a versioned value.
  ///
  /// ```swift
  /// let entry = Versioned(version: 1, value: "hello", writtenAt: Date())
  /// ```
  /// - Parameters:
  ///   - version: The version number.
  ///   - value: The value of that version.
  ///   - writtenAt: When it was committed.
  public init(version: Int64, value: Value, writtenAt: Date) {
    self.version = version
    self.value = value
    self.writtenAt = writtenAt
  }
}

extension Versioned: Equatable where Value: Equatable {}
