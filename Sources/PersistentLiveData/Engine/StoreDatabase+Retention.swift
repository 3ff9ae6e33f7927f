/// What the store knows of a key before reading or writing it: its newest version and the retention
/// recorded for it in the file (`pld_key_retention`), both read by one statement.
struct KeyHead {
  /// The newest version: its newest row's, or the version its removal took; 0 for a key never written.
  var latest: Int64
  /// The key's own retention, recorded by ``PersistentStore/liveData(_:default:retention:)``; nil when
  /// none is recorded and the store's ``StoreOptions/retention`` applies.
  var recorded: HistoryRetention?
}

/// Per-key retention: recorded by the file, so that every process writing the key and `pld-tool prune`
/// keep what the key's owner asked for, whatever their own ``StoreOptions/retention``.
///
/// ```swift
/// try database.recordRetention(.all, key: "flags")   // flags keeps every version, in every process
/// ```
extension StoreDatabase {
  /// Records `retention` as the retention of `key`, unless it is already the recorded one (then the
  /// file is not written).
  func recordRetention(_ retention: HistoryRetention, key: String) throws {
    try withConnection { connection, state in
      if try Self.keyHead(key: key, connection: connection).recorded == retention { return }
      try ensureWritable()
      let record = { () throws -> Void in
        let statement = try connection.cachedStatement(SQL.recordRetention)
        try statement.bind(key, at: 1)
        if let keep = retention.limit {
          try statement.bind(keep, at: 2)
        } else {
          try statement.bindNull(at: 2)
        }
        try statement.run()
      }
      if connection.isInTransaction {
        try record()  // part of the running transaction of this thread
      } else {
        try connection.inTransaction(.immediate, record)
        state.noteCommit(connection)
      }
    }
  }

  /// The retention that applies to the key of `head`: its recorded one, else the store's option.
  func retention(of head: KeyHead) -> HistoryRetention {
    head.recorded ?? options.retention
  }

  /// The oldest version still visible under the key's retention, given its head: versions at or below
  /// it may still be on disk (pruning runs in batches) but are no longer visible.
  func retentionFloor(_ head: KeyHead) -> Int64 {
    guard let keep = retention(of: head).limit else { return 0 }
    // Versions another writer made negative must not trap on the subtraction.
    let (floor, overflow) = head.latest.subtractingReportingOverflow(keep)
    return overflow ? 0 : max(0, floor)
  }

  /// The recorded retention of `key`, or nil.
  func recordedRetention(key: String) throws -> HistoryRetention? {
    try withConnection { connection, _ in try Self.keyHead(key: key, connection: connection).recorded }
  }

  /// The recorded retention of every key that has one, by key.
  func recordedRetentions() throws -> [StoreKey: HistoryRetention] {
    try withConnection { connection, _ in try Self.recordedRetentions(connection: connection) }
  }

  // MARK: Statements

  static func keyHead(key: String, connection: SQLiteConnection) throws -> KeyHead {
    let statement = try connection.cachedStatement(SQL.keyHead)
    // A statement left on a row keeps its read transaction open: it would pin an old snapshot (writes
    // then fail with SQLITE_BUSY_SNAPSHOT) and block every checkpoint. Always reset after reading.
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    guard try statement.step() else { return KeyHead(latest: 0, recorded: nil) }
    let latest = statement.isNull(0) ? 0 : statement.int64(0)
    let recorded = statement.isNull(1) ? nil : HistoryRetention(recorded: statement.int64(1))
    return KeyHead(latest: latest, recorded: recorded)
  }

  static func latestVersion(key: String, connection: SQLiteConnection) throws -> Int64 {
    try keyHead(key: key, connection: connection).latest
  }

  static func recordedRetentions(connection: SQLiteConnection) throws -> [StoreKey: HistoryRetention] {
    let statement = try connection.cachedStatement(SQL.recordedRetentions)
    defer { statement.reset() }
    var retentions: [StoreKey: HistoryRetention] = [:]
    while try statement.step() {
      retentions[statement.text(0)] = HistoryRetention(recorded: statement.isNull(1) ? 0 : statement.int64(1))
    }
    return retentions
  }
}

extension HistoryRetention {
  /// The retention a `keep` column (or ``SQL/keyHead``'s retention column) stands for: 0 or less is
  /// every version.
  init(recorded keep: Int64) {
    self = keep <= 0 ? .all : .last(Int(clamping: keep))
  }
}
