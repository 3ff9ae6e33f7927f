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
  public let version: Int64
  /// The value as written.
  public let value: Value
  /// When the version was committed (millisecond precision).
  public let writtenAt: Date

  /// Creates a versioned value.
  ///
  /// ```swift
  /// let entry = Versioned(version: 1, value: "hello", writtenAt: Date())
  /// ```
  public init(version: Int64, value: Value, writtenAt: Date) {
    self.version = version
    self.value = value
    self.writtenAt = writtenAt
  }
}

extension Versioned: Equatable where Value: Equatable {}
