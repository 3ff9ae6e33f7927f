import Foundation
import Logging

/// The connection of one store and everything done with it.
///
/// One SQLite connection per store, used under one recursive lock: SQLite's own mutex serializes single
/// calls, not transactions, so every `BEGIN … COMMIT` runs entirely under this lock. The lock is recursive
/// only for ``PersistentStore/transaction(isolation:_:)``, whose body runs on the calling thread and may
/// call `set`. Apart from transaction bodies, no user code (encoding, decoding, observers) ever runs
/// while the lock is held.
final class StoreDatabase: @unchecked Sendable {
  let path: String?
  let options: StoreOptions
  private let lock = NSRecursiveLock()
  private var connection: SQLiteConnection?
  private var fileRegistration: OpenFileRegistration?
  /// The latest row of every key, read at open, consumed as live data are created.
  private var preloaded: [String: StoredRow]
  private var instances: [String: LiveInstance] = [:]
  private var transaction: TransactionContext?
  /// The last `PRAGMA data_version` seen; it changes only when another connection commits.
  private var lastDataVersion: Int64 = 0
  private var externalChangeTimer: (any DispatchSourceTimer)?
  /// Commits since the last checkpoint, and when the last one happened: the background timer
  /// checkpoints once writes pause, so that callers rarely pay for it.
  private var commitsSinceCheckpoint = 0
  private var lastCommit = ContinuousClock.now

  /// Opens (creating it if needed) and validates the database at `path`, or an in-memory one.
  init(path: String?, options: StoreOptions) throws {
    self.path = path
    self.options = options
    let started = ContinuousClock.now
    let opened: StoreOpener.Opened
    do {
      opened = try StoreOpener(path: path, options: options).openDatabase()
    } catch {
      options.logger?.error(
        "Store refused or failed to open", metadata: ["path": "\(path ?? ":memory:")", "error": "\(error)"])
      throw error
    }
    connection = opened.connection
    fileRegistration = opened.registration
    preloaded = opened.latestRows
    if let logger = options.logger {
      for migration in opened.appliedMigrations {
        logger.notice(
          "Applied migration",
          metadata: [
            "path": "\(displayPath)", "version": "\(migration.version)", "name": "\(migration.name)",
          ])
      }
      logger.info(
        "Opened store",
        metadata: [
          "path": "\(displayPath)", "keys": "\(opened.latestRows.count)",
          "durability": "\(options.durability)", "milliseconds": "\(milliseconds(since: started))",
        ])
    }
    if path != nil, let interval = options.externalChangePollInterval, interval > .zero {
      lastDataVersion = (try? opened.connection.dataVersion()) ?? 0
      _ = try? opened.connection.setPragma("wal_autocheckpoint", Self.fallbackAutoCheckpointPages)
      startPolling(every: interval)
    }
  }

  deinit {
    externalChangeTimer?.cancel()
    connection?.close()
  }

  /// The path used in errors.
  var displayPath: String { path ?? ":memory:" }

  // MARK: Locking

  func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }

  /// The open connection; throws ``PersistentLiveDataError/storeClosed(path:)`` after `close()`.
  /// Call with the lock held.
  private func openConnection() throws -> SQLiteConnection {
    guard let connection else { throw PersistentLiveDataError.storeClosed(path: path) }
    return connection
  }

  /// Runs `body` with the connection under the lock, turning SQLite errors into store errors.
  func withConnection<Result>(_ body: (SQLiteConnection) throws -> Result) throws -> Result {
    try locked {
      let connection = try openConnection()
      do {
        return try body(connection)
      } catch {
        throw StoreErrors.map(error, path: displayPath)
      }
    }
  }

  var isClosed: Bool { locked { connection == nil } }

  func close() {
    locked {
      externalChangeTimer?.cancel()
      externalChangeTimer = nil
      connection?.close()
      connection = nil
      fileRegistration = nil
      preloaded = [:]
    }
  }

  // MARK: Changes made by other connections

  /// Checks for commits of other connections on a background timer, holding the database weakly.
  private func startPolling(every interval: Duration) {
    let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "PersistentLiveData.poll"))
    let nanoseconds = max(
      1_000_000,
      Int(interval.components.seconds) * 1_000_000_000
        + Int(interval.components.attoseconds / 1_000_000_000))
    timer.schedule(
      deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
      leeway: .nanoseconds(nanoseconds / 10))
    timer.setEventHandler { [weak self] in
      self?.applyExternalChanges()
      self?.checkpointIfIdle()
    }
    externalChangeTimer = timer
    timer.resume()
  }

  /// If another connection committed since the last check, reloads the latest row of every live key and
  /// moves the live values forward (never backwards), notifying their observers on the main actor.
  func applyExternalChanges() {
    let changed: [(LiveInstance, StoredRow)] = locked {
      guard let connection, transaction == nil,
        let dataVersion = try? connection.dataVersion(), dataVersion != lastDataVersion
      else { return [] }
      lastDataVersion = dataVersion
      preloaded.removeAll()
      var changed: [(LiveInstance, StoredRow)] = []
      for (key, instance) in instances where instance.object != nil {
        if let row = try? Self.latestRow(key: key, connection: connection) {
          changed.append((instance, row))
        }
      }
      return changed
    }
    if !changed.isEmpty {
      options.logger?.debug(
        "Another connection committed; reloaded live keys",
        metadata: ["path": "\(displayPath)", "keys": "\(changed.count)"])
    }
    // Decoding is user code: done without the lock. A live value only ever moves to a newer version,
    // so a write of this process committed meanwhile is never undone.
    for (instance, row) in changed {
      instance.object?.accept(row, onMainActor: false)?()
    }
  }

  // MARK: Checkpoints

  /// How many commits make a background checkpoint worthwhile, and how long writes must have paused.
  static let backgroundCheckpointCommits = 32
  static let backgroundCheckpointPause: Duration = .milliseconds(20)
  /// SQLite's own automatic checkpoint (run by whichever commit crosses the limit) stays at SQLite's
  /// default of 1,000 pages, for stores whose writes never pause. A larger limit makes those stalls rarer
  /// but longer (measured: p99.9 of 10 KB writes doubled at 4,096 pages), and lets the WAL grow.
  static let fallbackAutoCheckpointPages: Int64 = 1_000

  /// Records a commit made by this store.
  private func noteCommit() {
    commitsSinceCheckpoint += 1
    lastCommit = .now
  }

  /// Copies the WAL back into the database when this store has written and then paused, so that the
  /// caller of `set` rarely pays for a checkpoint (3–5 ms each). A PASSIVE checkpoint never blocks
  /// other connections and changes nothing about durability: the WAL is synced before it is copied.
  func checkpointIfIdle() {
    locked {
      guard let connection, transaction == nil,
        commitsSinceCheckpoint >= Self.backgroundCheckpointCommits,
        ContinuousClock.now - lastCommit >= Self.backgroundCheckpointPause
      else { return }
      commitsSinceCheckpoint = 0
      let started = ContinuousClock.now
      let result = try? connection.walCheckpoint(.passive)
      options.logger?.debug(
        "Background checkpoint",
        metadata: [
          "path": "\(displayPath)", "frames": "\(result?.checkpointedFrames ?? -1)",
          "milliseconds": "\(milliseconds(since: started))",
        ])
    }
  }

  // MARK: Live data instances

  /// The live instance for `key`, if one exists (lock held or not).
  func liveInstance(for key: String) -> LiveInstance? {
    locked { instances[key].flatMap { $0.object == nil ? nil : $0 } }
  }

  /// The live instance for `key` if one exists, otherwise its newest row (from the rows read at open if
  /// still there, otherwise from the file) — in one go under the lock.
  func instanceOrLatestRow(for key: String) throws -> Result<LiveInstance, StoredRowLookup> {
    try withConnection { connection in
      if let instance = instances[key], instance.object != nil { return .success(instance) }
      if let row = preloaded.removeValue(forKey: key) { return .failure(StoredRowLookup(row: row)) }
      return .failure(StoredRowLookup(row: try Self.latestRow(key: key, connection: connection)))
    }
  }

  /// Registers `created` unless another thread registered an instance first; returns the winner.
  func register(_ created: LiveInstance, for key: String) -> LiveInstance {
    locked {
      if let existing = instances[key], existing.object != nil { return existing }
      instances[key] = created
      return created
    }
  }

  // MARK: Writing

  /// Writes `payload` as the next version of `key` in its own transaction, or as part of the running
  /// ``transaction(_:)`` of this thread.
  ///
  /// `publish` runs under the lock once the write is committed (at the end of the enclosing transaction
  /// if there is one) and returns what to run after the lock is released (the notifications).
  /// - Parameter expectedVersion: When given, the write happens only if the newest stored version is
  ///   still this one; otherwise ``VersionConflict`` is thrown and nothing is written.
  /// - Returns: The version written (committed, or pending in the enclosing transaction).
  @discardableResult
  func write(
    key: String, payload: Data, expectedVersion: Int64? = nil, staged: (any Sendable)? = nil,
    publish: @escaping (Int64, Date) -> (() -> Void)?
  ) throws -> Int64 {
    var notification: (() -> Void)?
    let started = ContinuousClock.now
    let written = try withConnection { connection -> Int64 in
      let writtenAt = Date()
      if let transaction {
        let version = try insertNext(
          key: key, payload: payload, writtenAt: writtenAt, expectedVersion: expectedVersion,
          connection: connection)
        transaction.record(key: key, version: version, staged: staged) { publish(version, writtenAt) }
        return version
      }
      try connection.begin(.immediate)
      let version: Int64
      do {
        version = try insertNext(
          key: key, payload: payload, writtenAt: writtenAt, expectedVersion: expectedVersion,
          connection: connection)
        try connection.commit()
      } catch {
        connection.rollback()
        throw error
      }
      noteCommit()
      notification = publish(version, writtenAt)
      return version
    }
    if let logger = options.logger, ContinuousClock.now - started > options.slowWriteThreshold {
      logger.warning(
        "Slow write",
        metadata: [
          "path": "\(displayPath)", "key": "\(PersistentLiveDataError.quote(key))", "version": "\(written)",
          "milliseconds": "\(milliseconds(since: started))",
        ])
    }
    notification?()
    return written
  }

  private func milliseconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    let value = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
    return String(format: "%.1f", value)
  }

  /// Inserts the next version of `key` inside the current write transaction, reading the newest version
  /// inside it, so that no two connections or processes ever commit the same (key, version).
  private func insertNext(
    key: String, payload: Data, writtenAt: Date, expectedVersion: Int64?, connection: SQLiteConnection
  ) throws -> Int64 {
    let latest = try Self.latestVersion(key: key, connection: connection)
    if let expectedVersion, expectedVersion != latest {
      throw VersionConflict(latestVersion: latest)
    }
    // Only another writer can have pushed a key to the end of the range; trapping on the overflow would
    // let a file crash the app.
    guard latest < Int64.max else {
      throw PersistentLiveDataError.sqlite(
        path: displayPath, code: SQLiteError.fullCode,
        message: "key \(PersistentLiveDataError.quote(key)) has no version number left")
    }
    let version = latest + 1
    let insert = try connection.cachedStatement(SQL.insert)
    try insert.bind(key, at: 1)
    try insert.bind(version, at: 2)
    try insert.bind(StoredRow.milliseconds(writtenAt), at: 3)
    try insert.bindText(payload, at: 4)
    try insert.run()
    if let keep = options.retention.limit, Self.isPruneDue(version: version, keep: keep) {
      let prune = try connection.cachedStatement(SQL.prune)
      try prune.bind(key, at: 1)
      try prune.bind(version - keep, at: 2)
      try prune.run()
    }
    return version
  }

  /// Old versions are deleted in batches so that retention adds a small constant to the average write.
  static func isPruneDue(version: Int64, keep: Int64) -> Bool {
    let batch = min(128, max(16, keep / 2))
    return version > keep && version % batch == 0
  }

  // MARK: Transactions

  /// Runs `body` inside one write transaction; the writes in it commit together or not at all, and
  /// observers hear of them only after the commit. Nested calls use savepoints.
  func transaction(_ body: () throws -> Void) throws {
    var notifications: [() -> Void] = []
    try locked {
      let connection = try openConnection()
      if let transaction {
        try transaction.nested(connection: connection, body)
        return
      }
      let context = TransactionContext()
      transaction = context
      defer { transaction = nil }
      do {
        try connection.begin(.immediate)
      } catch {
        throw StoreErrors.map(error, path: displayPath)
      }
      do {
        try body()
        try connection.commit()
      } catch {
        connection.rollback()
        throw StoreErrors.map(error, path: displayPath)
      }
      noteCommit()
      notifications = context.publishAll()
    }
    for notification in notifications { notification() }
  }

  /// The value of `key` written earlier in the running transaction of this thread, if any.
  func stagedValue(for key: String) -> (value: any Sendable, version: Int64)? {
    locked { transaction?.staged[key] }
  }

  // MARK: Reading

  func latestVersion(key: String) throws -> Int64 {
    try withConnection { try Self.latestVersion(key: key, connection: $0) }
  }

  /// The oldest version still visible under the retention option, given the newest.
  func retentionFloor(latest: Int64) -> Int64 {
    guard let keep = options.retention.limit else { return 0 }
    // Versions another writer made negative must not trap on the subtraction.
    let (floor, overflow) = latest.subtractingReportingOverflow(keep)
    return overflow ? 0 : max(0, floor)
  }

  /// Versions of `key` newer than the retention floor, newest first.
  func history(key: String, limit: Int?) throws -> [StoredRow] {
    try withConnection { connection in
      let latest = try Self.latestVersion(key: key, connection: connection)
      let statement = try connection.cachedStatement(SQL.history)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(retentionFloor(latest: latest), at: 2)
      try statement.bind(Int64(limit.map { max(0, $0) } ?? -1), at: 3)
      var rows: [StoredRow] = []
      while try statement.step() {
        rows.append(Self.row(key: key, statement))
      }
      return rows
    }
  }

  /// Version `version` of `key`, or nil if it was never written or is below the retention floor.
  func row(key: String, version: Int64) throws -> StoredRow? {
    try withConnection { connection in
      let latest = try Self.latestVersion(key: key, connection: connection)
      guard version > retentionFloor(latest: latest), version <= latest else { return nil }
      let statement = try connection.cachedStatement(SQL.row)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      try statement.bind(version, at: 2)
      return try statement.step() ? Self.row(key: key, statement) : nil
    }
  }

  /// Deletes all but the newest `keep` versions of `key` (or of every key) in one transaction.
  func prune(key: String?, keep: Int64) throws -> Int {
    let keys = try key.map { [$0] } ?? self.keys()
    return try withConnection { connection in
      try connection.begin(.immediate)
      do {
        var deleted = 0
        for key in keys {
          let latest = try Self.latestVersion(key: key, connection: connection)
          let prune = try connection.cachedStatement(SQL.prune)
          try prune.bind(key, at: 1)
          let (floor, overflow) = latest.subtractingReportingOverflow(keep)
          if overflow { continue }  // nothing can be older than Int64.min
          try prune.bind(floor, at: 2)
          try prune.run()
          deleted += connection.changes
        }
        try connection.commit()
        return deleted
      } catch {
        connection.rollback()
        throw error
      }
    }
  }

  func keys() throws -> [String] {
    try withConnection { connection in
      let statement = try connection.cachedStatement(SQL.keys)
      defer { statement.reset() }
      var keys: [String] = []
      while try statement.step() { keys.append(statement.text(0)) }
      return keys
    }
  }

  /// Makes every commit so far durable, also under ``Durability/normal``: a checkpoint syncs the WAL
  /// before copying it ("the WAL file is synced before the checkpoint begins" — SQLite, WAL docs).
  func flush() throws {
    try withConnection { connection in
      _ = try connection.walCheckpoint(.passive)
    }
  }

  static func latestVersion(key: String, connection: SQLiteConnection) throws -> Int64 {
    let statement = try connection.cachedStatement(SQL.latestVersion)
    // A statement left on a row keeps its read transaction open: it would pin an old snapshot (writes
    // then fail with SQLITE_BUSY_SNAPSHOT) and block every checkpoint. Always reset after reading.
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    guard try statement.step(), !statement.isNull(0) else { return 0 }
    return statement.int64(0)
  }

  static func latestRow(key: String, connection: SQLiteConnection) throws -> StoredRow? {
    let statement = try connection.cachedStatement(SQL.latestRow)
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    return try statement.step() ? row(key: key, statement) : nil
  }

  /// Reads (version, written_at, payload) from the current row.
  static func row(key: String, _ statement: SQLiteStatement) -> StoredRow {
    StoredRow(
      key: key, version: statement.int64(0), writtenAtMilliseconds: statement.int64(1),
      payload: statement.data(2))
  }
}

/// The newest row of a key that has no live instance yet (nil: never written).
struct StoredRowLookup: Error {
  let row: StoredRow?
}

/// The newest stored version was not the one a read-modify-write started from.
struct VersionConflict: Error {
  let latestVersion: Int64
}

/// A live ``PersistentLiveData`` of a store, held weakly, with its value type.
struct LiveInstance {
  weak var object: (any LiveValue)?
  let valueType: Any.Type
}

/// What the store needs of a live value: moving it to a version written without it (by `pld-tool`,
/// another process, or raw JSON).
protocol LiveValue: AnyObject, Sendable {
  /// Decodes `row` into the value if it is newer and decodes; returns the notification to send.
  func accept(_ row: StoredRow, onMainActor: Bool) -> (() -> Void)?
}

/// The writes of one running ``StoreDatabase/transaction(_:)``.
final class TransactionContext {
  private var publications: [() -> (() -> Void)?] = []
  private(set) var staged: [String: (value: any Sendable, version: Int64)] = [:]
  private var savepointDepth = 0

  func record(
    key: String, version: Int64, staged value: (any Sendable)?, publication: @escaping () -> (() -> Void)?
  ) {
    publications.append(publication)
    if let value { staged[key] = (value, version) }
  }

  /// Runs `body` in a savepoint; if it throws, its writes are undone and forgotten.
  func nested(connection: SQLiteConnection, _ body: () throws -> Void) throws {
    savepointDepth += 1
    defer { savepointDepth -= 1 }
    let name = "pld_savepoint_\(savepointDepth)"
    let mark = publications.count
    let stagedBefore = staged
    try connection.execute("SAVEPOINT \(name)")
    do {
      try body()
      try connection.execute("RELEASE \(name)")
    } catch {
      try? connection.execute("ROLLBACK TO \(name)")
      try? connection.execute("RELEASE \(name)")
      publications.removeSubrange(mark...)
      staged = stagedBefore
      throw error
    }
  }

  /// Applies every committed write to memory, in order; returns the notifications to send.
  func publishAll() -> [() -> Void] {
    publications.compactMap { $0() }
  }
}
