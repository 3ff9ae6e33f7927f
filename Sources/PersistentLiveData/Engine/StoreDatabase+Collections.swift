internal import Foundation

/// Collections on the SQLite file (`Migrations/0008_collections.sql`): members read by their key range,
/// a collection's name recorded so that triggers log its members' changes, and that log read in commit
/// order.
///
/// ```swift
/// let (rows, changeCount) = try database.memberRows(prefix: "todo/", after: nil)
/// let page = try database.collectionLog(prefix: "todo/", after: checkpoint.position, limit: 256)
/// ```
extension StoreDatabase {
  /// The newest row of every member whose key starts with `prefix` (a collection's `name/`) and is above
  /// `prefix + after`, in byte order, with the log's newest position and the change count, all read in
  /// one read transaction. One seek per member, whatever the length of its history; the rest of the
  /// store is never read.
  func memberRows(
    prefix: String, after id: String?
  ) throws -> (
    rows: [StoredRow], position: Int64, changeCount: UInt64
  ) {
    guard let upper = MemberKey.upperBound(of: prefix) else { return ([], 0, 0) }
    // In the read window's transaction (or the running write transaction): rows and position agree.
    return try withConnectionInReadWindow { connection, state in
      let rows = try Self.memberRows(above: prefix + (id ?? ""), below: upper, connection: connection)
      return (rows, try Self.collectionLogNewest(connection), state.changeCount)
    }
  }

  /// The newest row of every key in `(lower, upper)`, in byte order.
  static func memberRows(
    above lower: String, below upper: String, connection: SQLiteConnection
  ) throws
    -> [StoredRow]
  {
    let statement = try connection.cachedStatement(CollectionSQL.members)
    defer { statement.reset() }
    try statement.bind(lower, at: 1)
    try statement.bind(upper, at: 2)
    var rows: [StoredRow] = []
    while try statement.step() {
      rows.append(row(key: statement.text(0), statement, from: 1))
    }
    return rows
  }

  /// What differs between `collection`'s members in memory and in the file: each member whose newest
  /// row is newer, and each member in memory the file no longer holds (removed), for a check that cannot
  /// tell which keys changed. Reads the collection's key range only.
  static func memberDifferences(
    of collection: any StoredCollectionValue, connection: SQLiteConnection
  ) throws -> [MemberChange] {
    guard let upper = MemberKey.upperBound(of: collection.prefix) else { return [] }
    var inMemory = collection.memberStates
    var changes: [MemberChange] = []
    for row in try memberRows(above: collection.prefix, below: upper, connection: connection) {
      guard let id = MemberKey.id(of: row.key, prefix: collection.prefix) else { continue }
      if row.version > inMemory.removeValue(forKey: StoreKey(id)) ?? 0 {
        changes.append(.written(row, staged: nil))
      }
    }
    for (id, version) in inMemory {
      let key = collection.prefix + id.text
      guard case .removed(let removal) = try latestState(key: key, connection: connection) else {
        // No row and no removal: the file was replaced or rewritten; the member is gone all the same.
        changes.append(.removed(key: key, version: version + 1, at: Date()))
        continue
      }
      changes.append(.removed(key: key, version: removal, at: Date()))
    }
    return changes
  }

  /// The keys that start with `prefix`, in UTF-8 byte order: a skip-scan of the primary key over the
  /// prefix's range, one seek per key.
  func keys(prefix: String) throws -> [String] {
    try withConnection { connection, _ in
      let upper = MemberKey.upperBound(of: prefix)
      let statement = try connection.cachedStatement(
        upper == nil ? CollectionSQL.keysFrom : CollectionSQL.keysBetween)
      defer { statement.reset() }
      try statement.bind(prefix, at: 1)
      if let upper { try statement.bind(upper, at: 2) }
      var keys: [String] = []
      while try statement.step() { keys.append(statement.text(0)) }
      return keys
    }
  }

  /// Records collection `name` in the file, so that from this commit on every change of its members is
  /// logged; nothing when it is recorded already, or the store is read-only (its log then holds what
  /// writable stores recorded).
  ///
  /// - Returns: Whether the collection is recorded.
  @discardableResult
  func recordCollection(_ name: String) throws -> Bool {
    try withConnection { connection, state in
      let check = try connection.cachedStatement(CollectionSQL.isRecorded)
      defer { check.reset() }
      try check.bind(name, at: 1)
      if try check.step() { return true }
      check.reset()
      guard !options.readOnly, readOnlyMigration == nil else { return false }
      let record = {
        let insert = try connection.cachedStatement(CollectionSQL.record)
        defer { insert.reset() }
        try insert.bind(name, at: 1)
        try insert.bind(StoredRow.milliseconds(Date()), at: 2)
        try insert.run()
      }
      if state.transaction != nil {
        try record()  // part of the running transaction of this thread
      } else {
        try connection.inTransaction(.immediate) { try record() }
        state.noteCommit(connection)
      }
      return true
    }
  }

  /// Up to `limit` logged changes of keys in `(lower, upper)` — a collection's members, or those up to
  /// an id — after `position` and up to `through`, in commit order; nil once the store is closed.
  func collectionLog(
    lower: String, upper: String, after position: Int64, through: Int64 = .max, limit: Int
  ) throws -> [LoggedMemberChange]? {
    do {
      return try withConnection { connection, _ in
        let statement = try connection.cachedStatement(CollectionSQL.log)
        defer { statement.reset() }
        try statement.bind(position, at: 1)
        try statement.bind(through, at: 2)
        try statement.bind(lower, at: 3)
        try statement.bind(upper, at: 4)
        try statement.bind(Int64(limit), at: 5)
        var changes: [LoggedMemberChange] = []
        // Versions below a key's retention floor may still be on disk (pruning runs in batches) but are
        // no longer visible, as in history(): skipped. A key's latest version is always above it.
        var floors: [StoreKey: Int64] = [:]
        let floor = { (key: String) throws -> Int64 in
          if let known = floors[StoreKey(key)] { return known }
          let value = self.retentionFloor(try Self.keyHead(key: key, connection: connection))
          floors[StoreKey(key)] = value
          return value
        }
        while try statement.step() {
          let seq = statement.int64(0)
          let key = statement.text(1)
          let version = statement.int64(2)
          if statement.int64(3) != 0 {
            let milliseconds = statement.isNull(9) ? 0 : statement.int64(9)
            let at = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            changes.append(
              LoggedMemberChange(
                position: seq, change: .removed(key: key, version: version, at: at),
                attribution: statement.attribution(at: 10)))
          } else if !statement.isNull(4), try version > floor(key) {
            let row = StoredRow(
              key: key, version: version, writtenAtMilliseconds: statement.int64(4),
              payload: statement.data(5), schemaVersion: Int(clamping: statement.int64(6)),
              attribution: statement.attribution(at: 7))
            changes.append(
              LoggedMemberChange(
                position: seq, change: .written(row, staged: nil), attribution: row.attribution))
          } else {
            // A version deleted meanwhile takes its log row with it; a row left without one is skipped.
            changes.append(LoggedMemberChange(position: seq, change: nil, attribution: nil))
          }
        }
        return changes
      }
    } catch PersistentLiveDataError.storeClosed {
      return nil
    }
  }

  /// The log's newest position: the highest number it ever handed out (0 for a file that logged none).
  func collectionLogNewest() throws -> Int64 {
    try withConnection { connection, _ in try Self.collectionLogNewest(connection) }
  }

  static func collectionLogNewest(_ connection: SQLiteConnection) throws -> Int64 {
    let statement = try connection.cachedStatement(CollectionSQL.newest)
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }

  /// How many rows of the collection log one trim looks at: trims run with the change log's, every
  /// ``ChangeLog/commitsPerTrim`` commits of this store, so the log is swept at two rows per commit.
  static let collectionLogTrimSpan: Int64 = 8_192

  /// Deletes the rows of the collection log after `position`, up to ``collectionLogTrimSpan`` of them,
  /// whose version is no longer stored, and returns where the next trim starts (back at 0 after the
  /// newest row).
  static func trimCollectionLog(after position: Int64, connection: SQLiteConnection) throws -> Int64 {
    let newest = try collectionLogNewest(connection)
    guard newest > 0 else { return 0 }
    let end = position + collectionLogTrimSpan
    let statement = try connection.cachedStatement(CollectionSQL.trim)
    defer { statement.reset() }
    try statement.bind(position, at: 1)
    try statement.bind(end, at: 2)
    try statement.run()
    return end >= newest ? 0 : end
  }

  /// Reads (version, written_at, payload, schema_version, author, reason) from columns `first…` of the
  /// current row.
  static func row(key: String, _ statement: SQLiteStatement, from first: Int) -> StoredRow {
    StoredRow(
      key: key, version: statement.int64(first), writtenAtMilliseconds: statement.int64(first + 1),
      payload: statement.data(first + 2), schemaVersion: Int(clamping: statement.int64(first + 3)),
      attribution: statement.attribution(at: first + 4))
  }
}

/// A change read from the collection log, at its position; `change` is nil for a row whose version was
/// deleted (it only moves the position).
struct LoggedMemberChange: Sendable {
  let position: Int64
  let change: MemberChange?
  let attribution: WriteAttribution?
}

/// The statements of collections, in one place (see ``SQL``).
enum CollectionSQL {
  /// The newest row of every key in `(?1, ?2)`: a skip-scan over the primary key, then one seek for each
  /// key's newest version.
  static let members = """
    WITH RECURSIVE k(key) AS (
      SELECT min(key) FROM pld_values WHERE key > ?1 AND key < ?2
      UNION ALL
      SELECT (SELECT min(key) FROM pld_values WHERE key > k.key AND key < ?2) FROM k WHERE k.key IS NOT NULL
    )
    SELECT v.key, v.version, v.written_at, v.payload, v.schema_version, v.author, v.reason
    FROM k JOIN pld_values v ON v.key = k.key
      AND v.version = (SELECT max(version) FROM pld_values WHERE key = k.key)
    WHERE k.key IS NOT NULL
    ORDER BY v.key
    """
  static let keysBetween = """
    WITH RECURSIVE k(key) AS (
      SELECT min(key) FROM pld_values WHERE key >= ?1 AND key < ?2
      UNION ALL
      SELECT (SELECT min(key) FROM pld_values WHERE key > k.key AND key < ?2) FROM k WHERE k.key IS NOT NULL
    )
    SELECT key FROM k WHERE key IS NOT NULL
    """
  static let keysFrom = """
    WITH RECURSIVE k(key) AS (
      SELECT min(key) FROM pld_values WHERE key >= ?1
      UNION ALL
      SELECT (SELECT min(key) FROM pld_values WHERE key > k.key) FROM k WHERE k.key IS NOT NULL
    )
    SELECT key FROM k WHERE key IS NOT NULL
    """
  static let isRecorded = "SELECT 1 FROM pld_collections WHERE name = ?"
  static let record =
    "INSERT INTO pld_collections (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
  static let newest = "SELECT coalesce(max(seq), 0) FROM pld_collection_log"
  /// Deletes the rows in (?1, ?2] — never the newest — whose version is no longer stored (pruned, or
  /// taken by a removal): they can no longer be delivered.
  static let trim = """
    DELETE FROM pld_collection_log
    WHERE seq > ?1 AND seq <= ?2 AND seq < (SELECT max(seq) FROM pld_collection_log) AND removed = 0
      AND NOT EXISTS (
        SELECT 1 FROM pld_values v WHERE v.key = pld_collection_log.key AND v.version = pld_collection_log.version)
    """
  /// Changes after ?1 up to ?2 of keys in (?3, ?4), in commit order, at most ?5; columns: seq, key,
  /// version, removed, then the version's written_at, payload, schema_version, author, reason, then the
  /// removal's removed_at, author, reason.
  static let log = """
    SELECT l.seq, l.key, l.version, l.removed, v.written_at, v.payload, v.schema_version, v.author,
      v.reason, r.removed_at, r.author, r.reason
    FROM pld_collection_log l
    LEFT JOIN pld_values v ON l.removed = 0 AND v.key = l.key AND v.version = l.version
    LEFT JOIN pld_removed_keys r ON l.removed = 1 AND r.key = l.key
    WHERE l.seq > ?1 AND l.seq <= ?2 AND l.key > ?3 AND l.key < ?4
    ORDER BY l.seq LIMIT ?5
    """
}
