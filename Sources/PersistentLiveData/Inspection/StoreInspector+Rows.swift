extension StoreInspector {
  /// The stored versions of `key`, newest first.
  ///
  /// ```swift
  /// let lastThree = try inspector.rows(key: "settings", limit: 3)
  /// ```
  /// - Parameters:
  ///   - key: The key.
  ///   - limit: At most this many rows (all when `nil`).
  /// - Returns: The rows as stored; empty only for a `limit` of 0.
  /// - Throws: ``InspectionError/unknownKey(path:key:)`` when no version of `key` is stored, or a
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func rows(key: String, limit: Int? = nil) throws -> [StoredRow] {
    var rows: [StoredRow] = []
    if hasValuesTable {
      try reading {
        let statement = try connection.prepare(InspectionSQL.rowsNewestFirst(columns: rowColumns))
        try statement.bind(key, at: 1)
        try statement.bind(Int64(limit.map { max(0, $0) } ?? -1), at: 2)
        while try statement.step() { rows.append(Self.row(key: key, statement)) }
      }
    }
    if rows.isEmpty {
      // No row: the key is unknown, unless none was asked for.
      let keyExists = limit == 0 ? try versionRange(of: key) != nil : false
      if !keyExists { throw InspectionError.unknownKey(path: path, key: key) }
    }
    return rows
  }

  /// Version `version` of `key`.
  ///
  /// ```swift
  /// let third = try inspector.row(key: "settings", version: 3)
  /// ```
  /// - Throws: ``InspectionError/unknownKey(path:key:)``,
  ///   ``InspectionError/unknownVersion(path:key:version:oldest:latest:removedAt:)`` when that version was
  ///   never written or has been pruned, or a ``/PersistentLiveDataBackend/PersistentLiveDataError``.
  package func row(key: String, version: Int64) throws -> StoredRow {
    guard let range = try versionRange(of: key) else {
      throw InspectionError.unknownKey(path: path, key: key)
    }
    let row: StoredRow? = try reading {
      let statement = try connection.cachedStatement(InspectionSQL.row(columns: rowColumns))
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(version, at: 2)
      return try statement.step() ? Self.row(key: key, statement) : nil
    }
    guard let row else {
      throw InspectionError.unknownVersion(
        path: path, key: key, version: version, oldest: range.oldest, latest: range.latest,
        removedAt: version < range.oldest ? try removalVersion(of: key) : nil)
    }
    return row
  }

  /// The version the last deletion of `key` took, if it was deleted and written again since (a file
  /// older than schema version 3 records no deletion).
  ///
  /// ```swift
  /// try inspector.removalVersion(of: "session")   // 6: versions 1…6 went with the deletion
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  func removalVersion(of key: String) throws -> Int64? {
    guard schemaVersion >= 3 else { return nil }
    return try reading {
      let statement = try connection.cachedStatement(SQL.removedVersion)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      return try statement.step() ? statement.int64(0) : nil
    }
  }

  /// The newest version of `key`.
  ///
  /// - Throws: ``InspectionError/unknownKey(path:key:)`` or a
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError``.
  package func latestRow(key: String) throws -> StoredRow {
    guard let row = try rows(key: key, limit: 1).first else {
      throw InspectionError.unknownKey(path: path, key: key)
    }
    return row
  }

  /// The versions of `key` newer than `version`, oldest first (empty when there are none).
  ///
  /// ```swift
  /// for row in try inspector.rows(key: "settings", after: lastSeen) { print(row.version) }
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func rows(key: String, after version: Int64) throws -> [StoredRow] {
    guard hasValuesTable else { return [] }
    return try reading {
      let statement = try connection.cachedStatement(InspectionSQL.rowsAfter(columns: rowColumns))
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(version, at: 2)
      var rows: [StoredRow] = []
      while try statement.step() { rows.append(Self.row(key: key, statement)) }
      return rows
    }
  }

  /// The number of stored versions of `key`, or of all keys when `key` is `nil`.
  ///
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func rowCount(key: String? = nil) throws -> Int {
    guard hasValuesTable else { return 0 }
    return try reading {
      if let key {
        return Int(try connection.scalarInt64(InspectionSQL.rowCountOfKey, [.text(key)]) ?? 0)
      }
      return Int(try connection.scalarInt64(InspectionSQL.rowCount) ?? 0)
    }
  }

  /// Calls `body` with every stored row — of `key`, or of every key — by key then version, one row at
  /// a time, from one consistent snapshot of the file.
  ///
  /// The snapshot is held until the last row is read, so a writer's later commits are not included; in
  /// WAL mode the writer is not blocked meanwhile.
  ///
  /// ```swift
  /// try inspector.forEachRow { row in export(row) }
  /// ```
  /// - Parameters:
  ///   - key: One key, or `nil` for all.
  ///   - body: Called for each row; throwing stops the iteration and rethrows.
  /// - Throws: What `body` throws, or a ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the
  ///   file.
  package func forEachRow(key: String? = nil, _ body: (StoredRow) throws -> Void) throws {
    guard hasValuesTable else { return }
    let statement = try reading {
      let statement = try connection.prepare(
        key == nil
          ? InspectionSQL.allRows(columns: rowColumns)
          : InspectionSQL.allRowsOfKey(columns: rowColumns))
      if let key { try statement.bind(key, at: 1) }
      return statement
    }
    defer { statement.reset() }
    while try reading({ try statement.step() }) {
      try body(Self.keyedRow(statement))
    }
  }

  /// The current row of a statement made by ``InspectionSQL/allRows(schema:descending:)`` or
  /// ``InspectionSQL/allRowsOfKey(schema:descending:)``: key, version, time, payload, schema version.
  static func keyedRow(_ statement: SQLiteStatement) -> StoredRow {
    StoredRow(
      key: statement.text(0), version: statement.int64(1), writtenAtMilliseconds: statement.int64(2),
      payload: statement.data(3), schemaVersion: Int(clamping: statement.int64(4)),
      attribution: statement.attribution(at: 5))
  }

  /// `PRAGMA data_version`: changes whenever *another* connection commits to the file.
  ///
  /// Costs a few microseconds; poll it to notice commits by applications and other processes. An
  /// inspector opened in ``AccessMode/immutable`` mode never sees a change.
  ///
  /// ```swift
  /// let before = try inspector.dataVersion()
  /// // … later
  /// if try inspector.dataVersion() != before { /* something was committed */ }
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func dataVersion() throws -> Int64 {
    try reading { try connection.dataVersion() }
  }

  /// Reads (version, written_at, payload, schema version) from the current row.
  static func row(key: String, _ statement: SQLiteStatement) -> StoredRow {
    StoredRow(
      key: key, version: statement.int64(0), writtenAtMilliseconds: statement.int64(1),
      payload: statement.data(2), schemaVersion: Int(clamping: statement.int64(3)),
      attribution: statement.attribution(at: 4))
  }
}
