package import Foundation

/// A version as a backend committed it: the row now stored, as the writer's live value records it.
///
/// Both backends return it from their commit: the SQLite store's write pipeline hands it to a
/// `PendingWrite`'s apply phase, the shared store's `SharedDatabase.commit` to the replica that wrote.
///
/// ```swift
/// let committed = CommittedVersion(
///   key: "settings", version: 8, writtenAtMilliseconds: 1_764_300_000_000, schemaVersion: 1, attribution: nil)
/// commitTimes.record(
///   committed.version, milliseconds: committed.writtenAtMilliseconds, attribution: committed.attribution)
/// ```
package struct CommittedVersion: Sendable {
  package let key: String
  package let version: Int64
  /// When it was committed, in milliseconds since 1970, as stored.
  package let writtenAtMilliseconds: Int64
  /// The schema version recorded with it.
  package let schemaVersion: Int
  /// Who wrote it, and why, as recorded with it.
  package let attribution: WriteAttribution?

  package init(
    key: String, version: Int64, writtenAtMilliseconds: Int64, schemaVersion: Int,
    attribution: WriteAttribution?
  ) {
    self.key = key
    self.version = version
    self.writtenAtMilliseconds = writtenAtMilliseconds
    self.schemaVersion = schemaVersion
    self.attribution = attribution
  }

  /// When it was committed.
  package var writtenAt: Date { Date(timeIntervalSince1970: Double(writtenAtMilliseconds) / 1000) }

  /// The row stored: this version with the bytes written.
  package func row(payload: Data) -> StoredRow {
    StoredRow(
      key: key, version: version, writtenAtMilliseconds: writtenAtMilliseconds, payload: payload,
      schemaVersion: schemaVersion, attribution: attribution)
  }
}
