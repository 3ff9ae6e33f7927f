internal import Foundation

/// Keeping a copy of versions numbered elsewhere: the local cache of a shared store keeps each key's
/// versions under the numbers its server gave them, through the faithful-restore path of the one insert.
extension PersistentStore {
  /// Stores `row` as it is — its version number, time, payload, value schema version and attribution —
  /// when it is newer than the key's newest version here; returns false, with nothing written, when it
  /// is not (numbers are never reused or reordered).
  ///
  /// ```swift
  /// let stored = try cache.storeVerbatim(rowFromTheServer)
  /// ```
  /// - Parameter row: A version committed elsewhere.
  /// - Returns: Whether it was written.
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` of the file (read-only, disk full,
  ///   closed…).
  func storeVerbatim(_ row: StoredRow) throws -> Bool {
    var write = try WriteAttribution.$current.withValue(nil) {
      try PendingWrite(key: row.key, payload: row.payload, schemaVersion: max(1, row.schemaVersion))
    }
    write.attribution = row.attribution.flatMap { $0.isEmpty ? nil : $0 }
    write.restoring = (row.version, row.writtenAt)
    do {
      try database.commit(write)
      return true
    } catch is StaleWrite {
      return false
    }
  }
}
