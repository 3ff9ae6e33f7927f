public import Foundation

/// One stored version of a value: what `PersistentLiveData/history(limit:)` returns.
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
  /// Who wrote the version, and why: the ``WriteAttribution/current`` in effect where the write was
  /// called; nil for a version written without one (and for every version written before stores recorded
  /// attributions).
  ///
  /// ```swift
  /// for entry in try flags.history(limit: 10) {
  ///   print(entry.version, entry.attribution?.author ?? "unknown", entry.attribution?.reason ?? "")
  /// }
  /// ```
  public let attribution: WriteAttribution?

  /// Creates a versioned value.
  ///
  /// ```swift
  /// let entry = Versioned(version: 1, value: "hello", writtenAt: Date())
  /// ```
  /// - Parameters:
  ///   - version: The version number.
  ///   - value: The value of that version.
  ///   - writtenAt: When it was committed.
  ///   - attribution: Who wrote it, and why; nil when unknown.
  public init(version: Int64, value: Value, writtenAt: Date, attribution: WriteAttribution? = nil) {
    self.version = version
    self.value = value
    self.writtenAt = writtenAt
    self.attribution = attribution
  }
}

extension Versioned: Equatable where Value: Equatable {}
