/// The store's view of `pld_change_log` (`Migrations/0006_change_log.sql`): which keys changed since a
/// position, so that another connection's commit costs what it changed, not what this process holds.
///
/// Every row inserted into `pld_values` or `pld_removed_keys` — by this library, pld-tool or any other
/// writer — adds a row `(seq, key)` in the same transaction, through a trigger. `seq` is `max(seq) + 1`
/// under SQLite's write lock, so numbers follow commit order with no hole, and the log is only trimmed
/// from its oldest end (``trim(connection:)`` keeps the newest ``kept`` rows). A reader that remembers
/// the newest `seq` it has seen therefore finds every change after it as the rows above it, unless the
/// rows right above it were trimmed (or the log was tampered with): ``changes(after:connection:)`` checks
/// that the rows it read start right above the position and run without a hole up to the newest, and
/// answers `nil` when they do not — the caller then reads every live key, as it did before the log.
///
/// ```swift
/// switch try ChangeLog.changes(after: position, connection: connection) {
/// case let changed?: reload(changed.keys); position = changed.newest
/// case nil: reloadEveryLiveKey(); position = try ChangeLog.newest(connection: connection)
/// }
/// ```
enum ChangeLog {
  /// How many of the newest rows a trim keeps: a reader that fell further behind reads every live key
  /// once.
  static let kept: Int64 = 8_192
  /// How many commits of this store between two trims.
  static let commitsPerTrim = 4_096

  private static let rowsAfter = "SELECT seq, key FROM pld_change_log WHERE seq > ? ORDER BY seq"
  private static let newestSQL = "SELECT coalesce(max(seq), 0) FROM pld_change_log"
  private static let trimSQL =
    "DELETE FROM pld_change_log WHERE seq <= (SELECT max(seq) FROM pld_change_log) - ?"
  private static let presence =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pld_change_log'"

  /// The keys changed after `position`, in no particular order, and the newest position; nil when the
  /// log cannot tell (rows above `position` were trimmed, or numbers are missing or went back).
  static func changes(
    after position: Int64, connection: SQLiteConnection
  ) throws -> (keys: Set<StoreKey>, newest: Int64)? {
    let statement = try connection.cachedStatement(rowsAfter)
    defer { statement.reset() }
    try statement.bind(position, at: 1)
    var keys = Set<StoreKey>()
    var expected = position + 1
    while try statement.step() {
      guard statement.int64(0) == expected else { return nil }  // a hole: rows trimmed or deleted
      keys.insert(StoreKey(statement.text(1)))
      expected += 1
    }
    if keys.isEmpty {
      // Nothing above the position: fine, unless the log now ends below it (emptied and started over).
      guard try newest(connection: connection) == position else { return nil }
    }
    return (keys, expected - 1)
  }

  /// The newest position in the log (0 for an empty log).
  static func newest(connection: SQLiteConnection) throws -> Int64 {
    let statement = try connection.cachedStatement(newestSQL)
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }

  /// Whether the file has a change log (a file this library migrated; an older one read as it is has
  /// none, and every live key is read instead).
  static func isPresent(connection: SQLiteConnection) -> Bool {
    ((try? connection.scalarInt64(presence)) ?? 0) == 1
  }

  /// Deletes all but the newest ``kept`` rows, in a transaction of its own (call it outside one).
  static func trim(connection: SQLiteConnection) throws {
    let statement = try connection.cachedStatement(trimSQL)
    defer { statement.reset() }
    try statement.bind(kept, at: 1)
    try statement.run()
  }
}
