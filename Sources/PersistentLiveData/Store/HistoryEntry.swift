public import Foundation

/// One stored version of a key and what became of it when read: its value, or why it does not decode.
///
/// ``PersistentLiveData/historyEntries(limit:)`` lists every kept version this way, so that an app can
/// show (or repair) a history in which some versions no longer decode, where
/// ``PersistentLiveData/history(limit:)`` leaves those out.
///
/// ```swift
/// for entry in try settings.historyEntries() {
///   switch entry.result {
///   case .success(let value): print("v\(entry.version): \(value)")
///   case .failure(let error): print("v\(entry.version) (schema \(entry.schemaVersion)): \(error)")
///   }
/// }
/// ```
public struct HistoryEntry<Value: Sendable>: Sendable {
  /// The version number.
  ///
  /// ```swift
  /// try settings.historyEntries(limit: 1).first?.version == settings.version   // once written
  /// ```
  public let version: Int64
  /// When the version was committed (millisecond precision).
  ///
  /// ```swift
  /// let age = Date().timeIntervalSince(entry.writtenAt)
  /// ```
  public let writtenAt: Date
  /// The ``/PersistentLiveDataBackend/PersistentValue/schemaVersion`` the version was written with (1 for a
  /// plain `Codable` value).
  ///
  /// ```swift
  /// let needsUpgrade = entry.schemaVersion < Settings.schemaVersion
  /// ```
  public let schemaVersion: Int
  /// The value (upgraded in memory from an older schema version), or the
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` or
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``
  /// error of this version.
  ///
  /// ```swift
  /// let value = try entry.result.get()   // throws this version's decoding error
  /// ```
  public let result: Result<Value, PersistentLiveDataError>
  /// Who wrote the version, and why; nil for a version written without a
  /// ``/PersistentLiveDataBackend/WriteAttribution`` (and for every version written before stores recorded
  /// attributions).
  ///
  /// ```swift
  /// let authors = try settings.historyEntries().compactMap(\.attribution?.author)
  /// ```
  public let attribution: WriteAttribution?

  /// The value, or nil when the version does not decode.
  ///
  /// ```swift
  /// let readable = try settings.historyEntries().compactMap(\.value)
  /// ```
  public var value: Value? {
    if case .success(let value) = result { return value }
    return nil
  }

  /// Creates an entry.
  ///
  /// ```swift
  /// let entry = HistoryEntry(version: 1, writtenAt: Date(), schemaVersion: 1, result: .success("hi"))
  /// ```
  /// - Parameters:
  ///   - version: The version number.
  ///   - writtenAt: When it was committed.
  ///   - schemaVersion: The schema version it was written with.
  ///   - result: Its value, or why it does not decode.
  ///   - attribution: Who wrote it, and why; nil when unknown.
  public init(
    version: Int64, writtenAt: Date, schemaVersion: Int, result: Result<Value, PersistentLiveDataError>,
    attribution: WriteAttribution? = nil
  ) {
    self.attribution = attribution
    self.version = version
    self.writtenAt = writtenAt
    self.schemaVersion = schemaVersion
    self.result = result
  }
}

extension HistoryEntry: Equatable where Value: Equatable {}
