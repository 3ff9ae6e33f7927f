/// Where a reader of every version of a key stands: the last version it delivered.
///
/// Shared by `PersistentLiveData/changes(since:)` and `pld-tool watch`, so that both deliver each
/// version exactly once, in order, and say so when versions they still needed were pruned instead of
/// skipping them silently. Versions of a key are 1, 2, 3 … with no gap, so a row that is not the next
/// version means the ones in between are no longer stored.
///
/// ```swift
/// var cursor = VersionCursor(key: "settings", after: 0)
/// for row in rowsAfter(cursor.position) {
///   try cursor.advance(over: row)   // throws changesPruned on a gap
///   deliver(row)
/// }
/// ```
package struct VersionCursor: Sendable {
  package let key: String
  /// The last version delivered (0: none yet).
  package private(set) var position: Int64
  /// Whether the first row is taken whatever its version: a cursor asked for every kept version.
  private var takesOldestKept: Bool

  /// A cursor that delivers the versions after `version` (negative counts as 0).
  ///
  /// - Parameter fromOldestKept: With `version` 0 (or less), start at the oldest version still stored,
  ///   however many were pruned or removed before it (`PersistentLiveData/changes(since:)`'s
  ///   `since: 0`). Without it, a first row other than version 1 is a gap like any other.
  package init(key: String, after version: Int64, fromOldestKept: Bool = false) {
    self.key = key
    position = max(0, version)
    takesOldestKept = fromOldestKept && version <= 0
  }

  /// Moves over `row`, the next row stored after ``position``.
  ///
  /// - Throws: ``PersistentLiveDataError/changesPruned(key:since:oldestKept:)`` when `row` is not the
  ///   version right after ``position``: the versions in between were pruned (or removed).
  package mutating func advance(over row: StoredRow) throws(PersistentLiveDataError) {
    guard row.version == position + 1 || takesOldestKept else {
      throw .changesPruned(key: key, since: position, oldestKept: row.version)
    }
    takesOldestKept = false
    position = row.version
  }
}
