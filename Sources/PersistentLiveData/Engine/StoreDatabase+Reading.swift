extension StoreDatabase {
  /// The newest stored row of `key` (or the version its removal took) for a new live instance, read by
  /// the primary key, and the change count it was read at.
  ///
  /// The read runs in the connection's read window (``SerializedConnection/syncInReadWindow(_:)``): a
  /// burst of new live values — an app asking for each of its keys at startup — shares one read
  /// transaction.
  func latestRowForNewInstance(key: String) throws -> (latest: StoredKeyState, changeCount: UInt64) {
    // A damaged page met on the way to this key's rows names the key that could not be read.
    try withConnectionInReadWindow(.latest(of: key)) { connection, state in
      (try Self.latestState(key: key, connection: connection), state.changeCount)
    }
  }

  /// Registers a new live instance created from a row read at `changeCount`, and returns the instance
  /// that is live, with the newest row of its key if the store changed since (the caller applies it
  /// after the lock is released).
  func register<Value, Instance: StoredLiveData<Value>>(
    _ created: Instance, valueType: Value.Type, readAt changeCount: UInt64
  ) throws -> (Instance, newer: StoredKeyState) {
    try withConnectionInReadWindow { connection, state in
      let live = try instances.register(created, valueType: valueType)
      guard live === created, state.changeCount != changeCount else { return (live, .never) }
      return (live, try Self.latestState(key: created.key, connection: connection))
    }
  }

  /// Versions of `key` newer than the retention floor, newest first.
  func history(key: String, limit: Int?) throws -> [StoredRow] {
    var lastRead: Int64?
    return try withConnection(.history(of: key, lastRead: lastRead)) { connection, _ in
      let head = try Self.keyHead(key: key, connection: connection)
      let statement = try connection.cachedStatement(SQL.history)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(retentionFloor(head), at: 2)
      try statement.bind(Int64(limit.map { max(0, $0) } ?? -1), at: 3)
      var rows: [StoredRow] = []
      while try statement.step() {
        rows.append(Self.row(key: key, statement))
        lastRead = rows.last?.version
      }
      return rows
    }
  }

  /// The newest version of `key` the store holds, its removal's included (0: never written).
  func newestVersion(key: String) throws -> Int64 {
    try withConnection(.latest(of: key)) { connection, _ in
      try Self.latestVersion(key: key, connection: connection)
    }
  }

  /// Versions of `key` after `version` that are above the retention floor, oldest first, at most `limit`.
  func rows(key: String, after version: Int64, limit: Int) throws -> [StoredRow] {
    var lastRead: Int64?
    return try withConnection(.changes(of: key, after: version, lastRead: lastRead)) { connection, _ in
      let head = try Self.keyHead(key: key, connection: connection)
      guard head.latest > version else { return [] }
      let statement = try connection.cachedStatement(SQL.rowsAfter)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(max(version, retentionFloor(head)), at: 2)
      try statement.bind(Int64(limit), at: 3)
      var rows: [StoredRow] = []
      while try statement.step() {
        rows.append(Self.row(key: key, statement))
        lastRead = rows.last?.version
      }
      return rows
    }
  }

  /// Version `version` of `key`, or nil if it was never written or is below the retention floor.
  func row(key: String, version: Int64) throws -> StoredRow? {
    try withConnection(.version(version, of: key)) { connection, _ in
      let head = try Self.keyHead(key: key, connection: connection)
      guard version > retentionFloor(head), version <= head.latest else { return nil }
      let statement = try connection.cachedStatement(SQL.row)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(version, at: 2)
      return try statement.step() ? Self.row(key: key, statement) : nil
    }
  }

  /// Every key with at least one stored version, in byte order.
  func keys() throws -> [String] {
    try withConnection { connection, _ in
      let statement = try connection.cachedStatement(SQL.keys)
      defer { statement.reset() }
      var keys: [String] = []
      while try statement.step() { keys.append(statement.text(0)) }
      return keys
    }
  }

  /// Deletes old versions of `key` (or of every key) in one transaction: all but the newest `keep`, but
  /// never what a key's recorded retention keeps (a key recorded as keeping every version is left
  /// alone); with `keep` nil, what each key's recorded retention no longer keeps (keys without one are
  /// left alone).
  func prune(key: String?, keep: Int64?) throws -> PruneOutcome {
    try ensureWritable()
    let keys = try key.map { [$0] } ?? self.keys()
    return try withConnection { connection, _ in
      try connection.inTransaction(.immediate) {
        var outcome = PruneOutcome()
        for key in keys {
          let head = try Self.keyHead(key: key, connection: connection)
          let kept: Int64
          switch (head.recorded, keep) {
          case (nil, nil): continue
          case (.all, _):
            outcome.keptByRetention[key] = .all
            continue
          case (.last(let count), nil): kept = Int64(max(1, count))
          case (.last(let count), let keep?):
            kept = max(keep, Int64(max(1, count)))
            if kept > keep { outcome.keptByRetention[key] = .last(count) }
          case (nil, let keep?): kept = keep
          }
          let (floor, overflow) = head.latest.subtractingReportingOverflow(kept)
          if overflow { continue }  // nothing can be older than Int64.min
          let prune = try connection.cachedStatement(SQL.prune)
          try prune.bind(key, at: 1)
          try prune.bind(floor, at: 2)
          try prune.run()
          outcome.deleted += connection.changes
        }
        return outcome
      }
    }
  }

  /// Makes every commit so far durable, also under ``Durability/normal``: a checkpoint syncs the WAL
  /// before copying it ("the WAL file is synced before the checkpoint begins" — SQLite, WAL docs).
  func flush() throws {
    try withConnection { connection, state in
      // A checkpoint cannot run inside the write transaction it would have to wait for.
      guard state.transaction == nil else {
        throw PersistentLiveDataError.notInTransaction(operation: "flush")
      }
      if options.readOnly { return }  // nothing of this store's to make durable
      _ = try connection.walCheckpoint(.passive)
    }
  }

  // MARK: Statements

  static func latestRow(key: String, connection: SQLiteConnection) throws -> StoredRow? {
    let statement = try connection.cachedStatement(SQL.latestRow)
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    return try statement.step() ? row(key: key, statement) : nil
  }

  /// Reads (version, written_at, payload, schema_version, author, reason) from the current row.
  static func row(key: String, _ statement: SQLiteStatement) -> StoredRow {
    StoredRow(
      key: key, version: statement.int64(0), writtenAtMilliseconds: statement.int64(1),
      payload: statement.data(2), schemaVersion: Int(clamping: statement.int64(3)),
      attribution: statement.attribution(at: 4))
  }
}

extension SQLiteStatement {
  /// The ``/PersistentLiveDataBackend/WriteAttribution`` in columns `index` (author) and `index + 1` (reason)
  /// of the current row; nil when both are NULL (a row written without one, or before migration 7).
  func attribution(at index: Int) -> WriteAttribution? {
    WriteAttribution(
      storedAuthor: isNull(index) ? nil : text(index), reason: isNull(index + 1) ? nil : text(index + 1))
  }

  /// Binds `attribution`'s author and reason (NULL for what is missing) at `index` and `index + 1`.
  func bind(_ attribution: WriteAttribution?, at index: Int) throws {
    if let author = attribution?.author { try bind(author, at: index) } else { try bindNull(at: index) }
    if let reason = attribution?.reason {
      try bind(reason, at: index + 1)
    } else {
      try bindNull(at: index + 1)
    }
  }
}
