internal import Foundation

/// The store's view of `pld_change_log` (`Migrations/0006_change_log.sql`): which keys changed since a
/// position, so that another connection's commit costs what it changed, not what this process holds.
///
/// A store that watches for other processes' commits registers as a reader
/// (``register(connection:isProcessAlive:)``, a row of `pld_change_log_readers` with a random id that it also
/// sets as its connection's `last_insert_rowid()`). While a reader other than the writer is registered, every
/// row inserted into `pld_values` or `pld_removed_keys` — by this library, pld-tool or any other writer —
/// adds a row `(seq, key)` in the same transaction, through a trigger; a file used by one process alone logs
/// nothing, and its writes pay nothing for the log. A reader's registration commits before it reads any key,
/// so every change committed after it is logged for it. `seq` is `max(seq) + 1` under SQLite's write lock, so
/// numbers follow commit order with no hole, and the log is only trimmed from its oldest end
/// (``trim(connection:)`` keeps the newest ``kept`` rows). A reader that remembers the newest `seq` it has
/// seen therefore finds every change after it as the rows above it, unless the rows right above it were
/// trimmed (or the log was tampered with): ``changes(after:connection:)`` checks that the rows it read start
/// right above the position and run without a hole up to the newest, and answers `nil` when they do not — the
/// caller then reads every live key, as it did before the log.
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
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pld_change_log_readers'"
  private static let readers = "SELECT id, pid FROM pld_change_log_readers"
  private static let addReader =
    "INSERT INTO pld_change_log_readers (id, pid, started_at) VALUES (?, ?, ?)"
  private static let removeReader = "DELETE FROM pld_change_log_readers WHERE id = ?"

  /// Registers this connection as a reader of the log and returns its id and the log's newest position:
  /// from the commit of the registration on, every change another writer commits is logged for it.
  /// Readers whose process is gone are deleted on the way. The transaction does not wait for the disk
  /// (`synchronous = OFF` for it alone): a registration lost to a power failure was a process's that
  /// did not survive it either.
  ///
  /// - Parameter isProcessAlive: Whether a process id is alive (on this machine: SQLite's WAL files
  ///   are shared by processes of one machine only).
  static func register(
    connection: SQLiteConnection, isProcessAlive: (Int64) -> Bool
  ) throws -> (id: Int64, position: Int64) {
    let restore = try bookkeeping(connection)
    defer { restore() }
    // Always a 9-byte varint: every registration's row has one size, so that with secure_delete its
    // removal leaves the page as the last one did (opening and closing a store leaves the file's bytes).
    let id = Int64.random(in: (1 << 56)...Int64.max)
    let position = try connection.inTransaction(.immediate) { () throws -> Int64 in
      var gone: [Int64] = []
      let list = try connection.cachedStatement(readers)
      defer { list.reset() }
      while try list.step() {
        if !isProcessAlive(list.int64(1)) { gone.append(list.int64(0)) }
      }
      list.reset()
      for reader in gone { try delete(reader: reader, connection: connection) }
      let add = try connection.cachedStatement(addReader)
      defer { add.reset() }
      try add.bind(id, at: 1)
      try add.bind(Int64(POSIX.processID), at: 2)
      try add.bind(StoredRow.milliseconds(Date()), at: 3)
      try add.run()
      return try newest(connection: connection)
    }
    connection.lastInsertRowID = id  // the insert set it already; the triggers' WHEN reads it
    return (id, position)
  }

  /// Deletes the registration `id` (a store closing), without waiting for the disk.
  static func unregister(_ id: Int64, connection: SQLiteConnection) throws {
    let restore = try bookkeeping(connection)
    defer { restore() }
    try delete(reader: id, connection: connection)
  }

  /// Sets the connection up for a registration's transaction and returns what restores it: no wait for
  /// the disk (`synchronous = OFF`), and deleted rows overwritten with zeros (`secure_delete = ON`), so
  /// that a registration and its removal leave no trace in the file.
  private static func bookkeeping(_ connection: SQLiteConnection) throws -> () -> Void {
    let synchronous = try connection.scalarInt64("PRAGMA synchronous") ?? 2
    let secureDelete = try connection.scalarInt64("PRAGMA secure_delete") ?? 0
    _ = try connection.setPragma("synchronous", 0)
    _ = try connection.setPragma("secure_delete", 1)
    return {
      _ = try? connection.setPragma("synchronous", synchronous)
      _ = try? connection.setPragma("secure_delete", secureDelete)
    }
  }

  private static func delete(reader id: Int64, connection: SQLiteConnection) throws {
    let statement = try connection.cachedStatement(removeReader)
    defer { statement.reset() }
    try statement.bind(id, at: 1)
    try statement.run()
  }

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
      // A newest row above it is another connection's commit between the two reads (each reads its own
      // snapshot): its change of `data_version` makes the next check read it.
      guard try newest(connection: connection) >= position else { return nil }
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
