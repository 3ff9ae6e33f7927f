package import Foundation

/// One row of `pld_values` as read from the file: the version, when it was written, the JSON payload and
/// the schema version of the value type that wrote it.
package struct StoredRow: Sendable, Equatable {
  package var key: String
  package var version: Int64
  /// Milliseconds since 1970-01-01T00:00:00Z.
  package var writtenAtMilliseconds: Int64
  package var payload: Data
  /// The ``PersistentValue/schemaVersion`` the value was written with: 1 for a plain `Codable` value and
  /// for every row written before the file recorded schema versions.
  package var schemaVersion: Int = 1
  /// Who wrote it, and why; nil for a row written without one (or before the file recorded them).
  package var attribution: WriteAttribution?

  package init(
    key: String, version: Int64, writtenAtMilliseconds: Int64, payload: Data, schemaVersion: Int = 1,
    attribution: WriteAttribution? = nil
  ) {
    self.attribution = attribution
    self.key = key
    self.version = version
    self.writtenAtMilliseconds = writtenAtMilliseconds
    self.payload = payload
    self.schemaVersion = schemaVersion
  }

  package var writtenAt: Date {
    Date(timeIntervalSince1970: Double(writtenAtMilliseconds) / 1000)
  }

  package static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }
}
