internal import Foundation
internal import Logging

extension StoreDatabase {
  /// Commits `write` as the next version of its key — in a transaction of its own, or as part of the
  /// running ``transaction(_:)`` of this thread — then notifies, with the lock released.
  ///
  /// See ``PendingWrite`` for the phases.
  ///
  /// - Returns: The version written (committed, or pending in the enclosing transaction).
  /// - Throws: ``StaleWrite`` (nothing written) or a ``/PersistentLiveDataBackend/PersistentLiveDataError``.
  @discardableResult
  func commit(_ write: PendingWrite) throws -> Int64 {
    try ensureWritable()
    // Timed only for a logger: reading the clock twice is a measurable part of a group commit's call.
    let started = options.logger == nil ? nil : ContinuousClock.now
    let (version, outcome) = try withConnection(.writing(write.key)) {
      connection, state -> (Int64, CommitOutcome?) in
      // A write made by the body of a running transaction (the one re-entry into the lock: user code).
      if let transaction = state.transaction {
        let version = try insert(write, into: transaction, connection: connection, cache: &state.keyHeads)
        return (version, nil)  // applied when the transaction commits
      }
      var version: Int64 = 0
      let outcome = try inWriteTransaction(connection, state, stagesValues: false) { context in
        version = try insert(write, into: context, connection: connection, cache: &state.keyHeads)
      }
      return (version, outcome)
    }
    if let logger = options.logger, let started, ContinuousClock.now - started > options.slowWriteThreshold {
      logger.warning(
        "Slow write",
        metadata: [
          "path": "\(displayPath)", "key": "\(EscapedText.quotedForMessage(write.key))",
          "version": "\(version)",
          "milliseconds": "\(Self.milliseconds(since: started))",
        ])
    }
    if let outcome { notify(outcome) }
    return version
  }

  /// The apply phase (under the lock): the key's live value moves to the committed version, taking the
  /// writer's value as it is (`StoredLiveData.receiveCommitted(_:)`); a write without a value of its type is
  /// handed to the notify phase, which decodes it.
  static func apply(
    _ write: PendingWrite, _ committed: CommittedVersion, instances: LiveInstanceRegistry
  ) -> CommitOutcome {
    if write.staged != nil, let instance = instances.instance(for: write.key),
      let effect = instance.receiveCommitted(
        CommittedWrite(committed: committed, staged: write.staged, onMainActor: write.notifiesOnMainActor))
    {
      return CommitOutcome(effect: effect)
    }
    return CommitOutcome(undecodedRows: [committed.row(payload: write.payload)])
  }

  /// The notify phase, with no lock held: raw rows are decoded by their live instances, then observers
  /// are notified in commit order.
  func notify(_ outcome: CommitOutcome) {
    defer { changeSignal.signal() }
    var effect = outcome.effect
    for row in outcome.undecodedRows {
      if let instance = instances.instance(for: row.key) {
        effect.merge(instance.receive(row, onMainActor: false))
      }
    }
    if !outcome.members.isEmpty {
      effect.merge(collections.apply(outcome.members, onMainActor: outcome.membersOnMainActor))
    }
    effect.notifyObservers()
  }

  /// The commit phase of one write, and the only place a version is inserted: inside the running write
  /// transaction `context`, inserts the next version of `write.key` and records the write in `context`
  /// (applied when it commits). The newest version is taken inside the write transaction, so that no two
  /// connections or processes ever commit the same (key, version): from `cache` when nothing else changed
  /// the file since this store last wrote the key, else read from the file.
  ///
  /// A write undoes itself when it throws, with no savepoint of its own on the common path: its checks
  /// run before its insert, the insert is one statement (SQLite undoes a failed statement), and when a
  /// prune is due after it, the two run in a savepoint of `context`, so that a failed prune takes the
  /// insert back with it.
  ///
  /// - Returns: The version inserted.
  /// - Throws: ``StaleWrite`` or a ``/PersistentLiveDataBackend/PersistentLiveDataError``; nothing of this
  ///   write is left then.
  @discardableResult
  func insert(
    _ write: PendingWrite, into context: TransactionContext, connection: SQLiteConnection,
    cache: inout KeyHeadCache
  ) throws -> Int64 {
    do {
      let committed = try insertNext(write, context: context, connection: connection, cache: &cache)
      context.record(write, committed: committed)
      return committed.version
    } catch {
      context.keyHeads.isReliable = false  // heads it read or made may not be in the file
      throw error
    }
  }

  private func insertNext(
    _ write: PendingWrite, context: TransactionContext, connection: SQLiteConnection,
    cache: inout KeyHeadCache
  ) throws -> CommittedVersion {
    let head = try cache.head(of: write.key, in: &context.keyHeads, connection: connection)
    let latest = head.latest
    if let expected = write.expectedVersion, expected != latest {
      // The key holds no version when its newest is the one a removal took: then "0" (create only) holds.
      let current = try Self.hasRow(key: write.key, version: latest, connection: connection) ? latest : 0
      guard expected == 0, current == 0 else {
        throw StaleWrite(latestVersion: latest, currentVersion: current)
      }
    }
    if let restoring = write.restoring, restoring.version <= latest {
      throw StaleWrite(latestVersion: latest, currentVersion: latest)
    }
    // Only another writer can have pushed a key to the end of the range; trapping on the overflow would
    // let a file crash the app.
    guard latest < Int64.max else {
      throw PersistentLiveDataError.versionsExhausted(key: write.key, path: displayPath)
    }
    let schemaVersion =
      try write.schemaVersion ?? Self.schemaVersion(key: write.key, version: latest, connection: connection)
    let committed = CommittedVersion(
      key: write.key, version: write.restoring?.version ?? latest + 1,
      writtenAtMilliseconds: StoredRow.milliseconds(write.restoring?.writtenAt ?? Date()),
      schemaVersion: schemaVersion,
      attribution: write.attribution)
    let keep = retention(of: head).limit
    let insert = { () throws -> Void in
      let insert = try connection.cachedStatement(SQL.insert)
      try insert.bind(write.key, at: 1)
      try insert.bind(committed.version, at: 2)
      try insert.bind(committed.writtenAtMilliseconds, at: 3)
      try insert.bindText(write.payload, at: 4)
      try insert.bind(Int64(schemaVersion), at: 5)
      try insert.bind(write.attribution, at: 6)  // NULLs when none: no statement of its own
      try insert.run()
    }
    if let keep, Self.isPruneDue(version: committed.version, keep: keep) {
      try context.savepoint(connection: connection) {
        try insert()
        try self.prune(key: write.key, through: committed.version - keep, connection: connection)
      }
    } else {
      try insert()
    }
    cache.wrote(
      KeyHead(latest: committed.version, recorded: head.recorded), of: write.key, in: &context.keyHeads,
      connection: connection)
    return committed
  }

  /// Whether `key` has a row at `version` (false for 0, and for the version a removal took).
  private static func hasRow(key: String, version: Int64, connection: SQLiteConnection) throws -> Bool {
    guard version > 0 else { return false }
    let statement = try connection.cachedStatement(SQL.schemaVersion)
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    try statement.bind(version, at: 2)
    return try statement.step()
  }

  /// The schema version of `version` of `key`; 1 when there is no such row (a new key).
  private static func schemaVersion(key: String, version: Int64, connection: SQLiteConnection) throws -> Int {
    let statement = try connection.cachedStatement(SQL.schemaVersion)
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    try statement.bind(version, at: 2)
    return try statement.step() ? Int(clamping: statement.int64(0)) : 1
  }

  /// Applies the key's retention (its recorded one, else the store's option): the versions up to
  /// `version` are deleted, in batches (``isPruneDue(version:keep:)``), so that retention adds a small
  /// constant to the average write.
  private func prune(key: String, through version: Int64, connection: SQLiteConnection) throws {
    let prune = try connection.cachedStatement(SQL.prune)
    try prune.bind(key, at: 1)
    try prune.bind(version, at: 2)
    try prune.run()
  }

  static func isPruneDue(version: Int64, keep: Int64) -> Bool {
    let batch = min(128, max(16, keep / 2))
    return version > keep && version % batch == 0
  }
}

extension StoreDatabase.WriterState {
  /// Records a commit made by this store; now and then trims the change log (``ChangeLog``), in a
  /// transaction of its own right after this one.
  func noteCommit(_ connection: SQLiteConnection) {
    checkpoints.noteCommit()
    changeCount &+= 1
    commitsSinceChangeLogTrim += 1
    if commitsSinceChangeLogTrim >= ChangeLog.commitsPerTrim {
      commitsSinceChangeLogTrim = 0
      try? ChangeLog.trim(connection: connection)  // a failed trim leaves a longer log: nothing is lost
      if let next = try? StoreDatabase.trimCollectionLog(
        after: collectionLogTrimPosition, connection: connection)
      {
        collectionLogTrimPosition = next
      }
    }
    onOwnCommit?()
    if checkpoints.isPending { onCheckpointPending?() }
    if !isWALSyncScheduled, let scheduleWALSync {
      isWALSyncScheduled = true
      scheduleWALSync()
    }
  }
}
