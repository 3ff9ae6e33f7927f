internal import Foundation
internal import Logging

/// The SQLite side of one ``PersistentStore``: its connection, and everything done with it.
///
/// A newcomer's map (ARCHITECTURE.md has the picture):
/// - the connection and the state that goes with it are a ``SerializedConnection`` (one lock);
/// - writes go through the write pipeline (`StoreDatabase+Writing.swift`): *prepare* (encode, no lock),
///   *commit* (one transaction, under the lock), *apply* (memory moves with the commit, still under the
///   lock), *notify* (observers, after the lock is released) — transactions (`+Transactions`) reuse it;
/// - reads are in `+Reading`; other connections' commits are found by `+ExternalChanges`; background
///   checkpoints are in `+Checkpoints`; when both run (woken by file changes, or polling) is decided by
///   ``StoreBackgroundWork``;
/// - live instances, one per key, are in a backend-neutral ``LiveInstanceRegistry``.
///
/// No decoding and no user code run under the lock, with one documented exception: the body of
/// ``transaction(_:)`` runs under it, because its writes must commit together.
final class StoreDatabase: Sendable {
  let path: String?
  let options: StoreOptions
  /// The migration a newer library applied that makes this file read-only here (the README's compatibility
  /// promise), if any: every write throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/readOnlyMigration(path:migration:)``.
  let readOnlyMigration: String?
  /// The live ``PersistentLiveData`` of every key.
  let instances = LiveInstanceRegistry()
  /// The live collections of this store, by name (``PersistentCollection``).
  let collections = LiveCollectionRegistry()
  let writer: SerializedConnection<WriterState>
  /// The `write { }` calls waiting for the next group commit.
  let groupCommit = GroupCommitQueue()
  /// Signalled after every commit this store makes or notices: wakes ``PersistentLiveData/changes(since:)``.
  let changeSignal = ChangeSignal()
  /// What the checks for other connections' commits read (tests look at it).
  let externalCheckStatistics = Locked(ExternalCheckStatistics())
  /// The app's streams of ``/PersistentLiveDataBackend/StoreEvent``s (``PersistentStore/events()``).
  let events = StoreEventHub()
  /// What the store reports to swift-metrics and swift-distributed-tracing.
  let instrumentation: StoreInstrumentation
  /// Looks for other connections' commits (woken by file changes, or polling) and runs background
  /// checkpoints; `nil` for in-memory stores and with `externalChangePollInterval = nil`.
  let backgroundWork: StoreBackgroundWork?

  /// Everything besides the connection that only the holder of the writer's lock may touch.
  final class WriterState {
    /// Claims the file for this process (released on close).
    var fileRegistration: OpenFileRegistration?
    /// The transaction running on the thread that holds the lock, if any.
    var transaction: TransactionContext?
    /// When to checkpoint in the background.
    var checkpoints = CheckpointSchedule()
    /// Called by a commit after which a background checkpoint is pending (it arms a timer).
    var onCheckpointPending: (@Sendable () -> Void)?
    /// Called by every commit of this store: its background work defers the wake-ups its own writes
    /// cause.
    var onOwnCommit: (@Sendable () -> Void)?
    /// Under ``Durability/normal``: arms the background sync of the WAL (``StoreOptions/walSyncInterval``)
    /// after a commit; nil when there is none.
    var scheduleWALSync: (@Sendable () -> Void)?
    /// Whether a background sync of the WAL is armed: commits until it runs are not yet synced.
    var isWALSyncScheduled = false
    /// The last `PRAGMA data_version` seen; it changes only when another connection commits.
    var lastDataVersion: Int64 = 0
    /// The newest change log position ``StoreDatabase/applyExternalChanges()`` has applied; nil when the
    /// file has no change log or the position is unknown (every live key is read at the next check).
    var changeLogPosition: Int64?
    /// Commits of this store since it last trimmed the change log.
    var commitsSinceChangeLogTrim = 0
    /// Where the next trim of the collection log starts (`StoreDatabase.trimCollectionLog`).
    var collectionLogTrimPosition: Int64 = 0
    /// This store's registration as a reader of the change log, deleted when it closes.
    var changeLogReader: Int64?
    /// The heads of the keys this store wrote: a write skips reading its key's head when nothing else
    /// changed the file since.
    var keyHeads = KeyHeadCache()
    /// Counts every change of the stored state this store knows of (its commits, other connections'
    /// commits it noticed): a live instance created from a row read before a change reads again.
    var changeCount: UInt64 = 0

    init(fileRegistration: OpenFileRegistration?) {
      self.fileRegistration = fileRegistration
    }
  }

  /// Opens (creating it if needed) and validates the database at `path`, or an in-memory one.
  init(path: String?, options: StoreOptions) throws {
    self.path = path
    self.options = options
    instrumentation = StoreInstrumentation(backend: .sqlite, tracesKeys: options.tracesKeys)
    let started = ContinuousClock.now
    let opened: StoreOpener.Opened
    do {
      opened = try StoreOpener(path: path, options: options).openDatabase()
    } catch {
      options.logger?.error(
        "Store refused or failed to open", metadata: ["path": "\(path ?? ":memory:")", "error": "\(error)"])
      throw error
    }
    readOnlyMigration = opened.readOnlyMigration
    let state = WriterState(fileRegistration: opened.registration)
    writer = SerializedConnection(opened.connection, state: state)
    if path != nil, let interval = options.externalChangePollInterval, interval > .zero {
      state.lastDataVersion = (try? opened.connection.dataVersion()) ?? 0
      // Other processes log the keys they change for this store from now on. No live instance exists
      // yet: each one reads its key's newest row when it is created. A store that cannot register (a
      // read-only store or file, a file without the log) reads every live key at each check instead.
      if !options.readOnly, opened.readOnlyMigration == nil, !opened.connection.isReadOnly,
        ChangeLog.isPresent(connection: opened.connection),
        let registration = try? ChangeLog.register(
          connection: opened.connection, isProcessAlive: POSIX.isProcessAlive)
      {
        state.changeLogReader = registration.id
        state.changeLogPosition = registration.position
      }
      _ = try? opened.connection.setPragma("wal_autocheckpoint", Self.fallbackAutoCheckpointPages)
      let work = StoreBackgroundWork(
        pollInterval: interval, safetyNetInterval: options.externalChangeSafetyNetInterval,
        checkpointPause: Self.backgroundCheckpointPause)
      state.onCheckpointPending = { [weak work] in work?.checkpointSoon() }
      state.onOwnCommit = { [weak work] in work?.noteOwnCommit() }
      backgroundWork = work
    } else {
      backgroundWork = nil
    }
    if path != nil, options.durability == .normal, let interval = options.walSyncInterval {
      let delay = DispatchTimeInterval.nanoseconds(
        Int(
          clamping: interval.components.seconds * 1_000_000_000 + interval.components.attoseconds
            / 1_000_000_000))
      state.scheduleWALSync = { [weak self] in
        guard let self else { return }
        Self.walSyncQueue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.syncWriteAheadLog() }
      }
    }
    let writer = writer
    backgroundWork?.start(
      watching: path, watchesFiles: options.watchesStoreFiles,
      work: .init(
        hasNewCommit: { Self.hasNewCommit(writer) },
        check: { [weak self] in self?.applyExternalChanges() },
        checkpoint: { [weak self] in self?.checkpointIfIdle() ?? false },
        hasNewCommitIfIdle: { Self.hasNewCommitIfIdle(writer) }))
    logOpen(opened, started: started)
  }

  deinit {
    // Released: the file is free for another store at once, even if the background work holds the
    // connection for a moment (the lock waits for it).
    close()
  }

  /// Whether another connection committed since ``applyExternalChanges()`` last looked (`PRAGMA
  /// data_version` moved) and nothing keeps it from applying that commit now (a transaction): a few µs
  /// under the lock.
  ///
  /// Static, on the connection alone: the check that every commit's file event causes — this store's
  /// own commits included — never holds the store, so releasing the store's last reference right after
  /// a `set` closes its file at once.
  static func hasNewCommit(_ writer: SerializedConnection<WriterState>) -> Bool {
    writer.syncIfOpen { connection, state in hasNewCommit(connection, state) } ?? false
  }

  /// ``hasNewCommit(_:)`` if the lock is free at once (closed: false); nil while another thread holds it.
  static func hasNewCommitIfIdle(_ writer: SerializedConnection<WriterState>) -> Bool? {
    switch writer.syncIfAvailable({ connection, state in hasNewCommit(connection, state) }) {
    case .done(let found): found
    case .closed: false
    case .busy: nil
    }
  }

  private static func hasNewCommit(_ connection: SQLiteConnection, _ state: WriterState) -> Bool {
    guard state.transaction == nil, let version = try? connection.dataVersion() else { return false }
    return version != state.lastDataVersion
  }

  /// The path used in errors.
  var displayPath: String { path ?? ":memory:" }

  /// Runs `body` with the connection and its state under the lock, turning SQLite errors into
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError``s that name the file.
  ///
  /// A damaged page `body` meets is reported (``reportingDamage(_:at:)``), naming `site` — evaluated
  /// then, so that it may name the last version `body` read.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` after ``close()``,
  ///   or what `body` throws.
  func withConnection<Result>(
    _ site: @autoclosure () -> DamageSite? = nil, _ body: (SQLiteConnection, WriterState) throws -> Result
  ) throws -> Result {
    try mappingErrors(site) { try writer.sync(body) }
  }

  /// Runs the read-only `body` like ``withConnection(_:_:)``, in the connection's read window
  /// (``SerializedConnection/syncInReadWindow(_:)``): reads of new live values share one read
  /// transaction.
  func withConnectionInReadWindow<Result>(
    _ site: @autoclosure () -> DamageSite? = nil, _ body: (SQLiteConnection, WriterState) throws -> Result
  ) throws -> Result {
    try mappingErrors(site) { try writer.syncInReadWindow(body) }
  }

  /// `body`'s result, or its error as a ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the
  /// file.
  private func mappingErrors<Result>(
    _ site: () -> DamageSite?, _ body: () throws -> Result
  ) throws -> Result {
    do {
      return try body()
    } catch is SerializedConnection<WriterState>.Closed {
      throw PersistentLiveDataError.storeClosed(path: path)
    } catch let error as SQLiteError {
      // Reported once, where SQLite's error is first mapped: a store error thrown through `body` (a set
      // inside a transaction's body) was reported by the call that mapped it.
      throw reportingDamage(StoreErrors.map(error, path: displayPath), at: site())
    } catch {
      throw StoreErrors.map(error, path: displayPath)
    }
  }

  /// Throws ``/PersistentLiveDataBackend/PersistentLiveDataError/readOnly(path:)`` for a store opened with
  /// ``StoreOptions/readOnly``: every write path calls it first, so that nothing — no user code, no SQL —
  /// runs for a refused write.
  func ensureWritable() throws {
    if options.readOnly { throw PersistentLiveDataError.readOnly(path: displayPath) }
    if let readOnlyMigration {
      throw PersistentLiveDataError.readOnlyMigration(path: displayPath, migration: readOnlyMigration)
    }
  }

  /// Throws ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` after ``close()``.
  func ensureOpen() throws {
    guard writer.isOpen else { throw PersistentLiveDataError.storeClosed(path: path) }
  }

  /// Throws ``/PersistentLiveDataBackend/PersistentLiveDataError/notInTransaction(operation:)`` when called
  /// from the body of a transaction or `write` of this store (on the thread that runs it). It never waits:
  /// another thread's transaction holds the lock, and this thread is then not inside it.
  func refuseInsideTransaction(_ operation: String) throws {
    if writer.stateIfAvailable({ $0.transaction != nil }) == true {
      throw PersistentLiveDataError.notInTransaction(operation: operation)
    }
  }

  /// Stops the background work and closes the connection; later calls throw `storeClosed`. Idempotent.
  func close() {
    backgroundWork?.cancel()
    defer {
      changeSignal.close()
      events.finish()
    }
    groupCommit.close(with: PersistentLiveDataError.storeClosed(path: path))
    writer.syncIfOpen { connection, state in
      // Other processes stop logging for this store (best effort: a row left behind is deleted by the
      // next store that opens the file once this process is gone).
      if let reader = state.changeLogReader, !connection.isInTransaction {
        state.changeLogReader = nil
        try? ChangeLog.unregister(reader, connection: connection)
      }
    }
    writer.close { state in state.fileRegistration = nil }
  }

  // MARK: Logging

  private func logOpen(_ opened: StoreOpener.Opened, started: ContinuousClock.Instant) {
    guard let logger = options.logger else { return }
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
        "path": "\(displayPath)",
        "durability": "\(options.durability)", "milliseconds": "\(Self.milliseconds(since: started))",
      ])
  }

  static func milliseconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    let value = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
    return String(format: "%.1f", value)
  }
}
