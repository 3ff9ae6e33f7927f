import Foundation
import Logging
import PersistentLiveDataBackend
import PostgresNIO

/// One write of a shared store: a key's next version, encoded, not yet committed.
struct SharedWrite: Sendable {
  let key: String
  let keyHash: String
  let payload: String
  let schemaVersion: Int
  /// For an optimistic write (``SharedLiveData/update(isolation:_:)``): the version it was computed
  /// from. Nil writes unconditionally.
  var expectedVersion: Int64?
  /// Who writes it, and why: ``/PersistentLiveDataBackend/WriteAttribution/current`` where the write was
  /// called (checked against its limits then); NULLs in the row when nil.
  var attribution: WriteAttribution?
  /// The value as the writer had it, typed: a live collection of its type takes it without decoding.
  var staged: (any Sendable)?
}

/// What a shared store does on its server: the statements, each bounded by the operation timeout, and
/// the state every replica keeps in memory (its live values, the signal for `changes(since:)`).
///
/// Every write is one statement — heads upsert, value insert and retention — so a single `set` is one
/// round trip and one transaction; a multi-key transaction sends the same statements between `BEGIN` and
/// `COMMIT`. The notifications follow the commit in a statement of their own (``SharedNotifier``): one
/// inside the transaction would serialize every writer's commit on the server. Nothing here runs user
/// code.
///
/// ```swift
/// let committed = try await database.commit([write], operation: "set")
/// ```
final class SharedDatabase: Sendable {
  let client: PostgresClient
  let options: PostgresStoreOptions
  let registry = LiveInstanceRegistry()
  /// The live collections (``SharedCollection``), by name.
  let collections = LiveCollectionRegistry()
  let changeSignal = ChangeSignal()
  /// The app's streams of ``/PersistentLiveDataBackend/StoreEvent``s (``PostgresStore/events()``).
  let events = StoreEventHub()
  /// Sends the notifications of this store's commits, after them.
  let notifier: SharedNotifier
  /// Where the periodic catch-up resumes.
  let changeFeed = SharedChangeFeed()
  /// Asks the periodic catch-up to look now: a listening session that started (after a reconnect, a
  /// server restart) does, when collections are live.
  let lookRequests = ChangeSignal()
  /// What the store reports to swift-metrics and swift-distributed-tracing.
  let instrumentation: StoreInstrumentation
  /// Whether the last attempt to reach the server succeeded (`pld.postgres.reachable`).
  let reachability: ServerReachability
  /// The local copy of the keys this replica opened (``PostgresStoreOptions/localCachePath``); nil
  /// without one.
  let cache: SharedCache?
  /// The hash of every key that had a live value, to find the key of a notification that carried only
  /// the hash (a key too long for the payload).
  private let keysByHash = Locked<[String: String]>([:])
  /// A migration a newer release applied and marked read-only for this one (the README's compatibility
  /// promise): every write throws ``SharedStoreError/readOnlyMigration(migration:)``.
  private let readOnlyMigration = Locked<String?>(nil)
  /// Whether a newer release made the database read-only for this one (known once the schema is ready).
  var isReadOnly: Bool { readOnlyMigration.withLock { $0 != nil } }
  private let schemaTask = Locked<(task: Task<Void, any Error>, started: ContinuousClock.Instant, id: Int)?>(
    nil)
  private let schemaReady = Locked(false)
  /// The latest version of a key that its live value could not decode (its value stays behind).
  private let undecodable = Locked<[StoreKey: Int64]>([:])

  /// This store's name in the notifications it sends: its listener skips them (its own writes moved
  /// memory already).
  let origin: String = {
    var generator = SystemRandomNumberGenerator()
    return String(generator.next() as UInt64, radix: 16)
  }()

  /// The channel every write notifies.
  static let channel = "pld_changes"
  /// Keys longer than this (UTF-8 bytes) are notified by their hash: a payload must stay under 8,000.
  static let longestNotifiedKey = 7_900

  /// Why the pool's connections fail, when the store knows how they are made (nil otherwise).
  let probe: ConnectProbe?

  init(client: PostgresClient, options: PostgresStoreOptions, probe: ConnectProbe? = nil) {
    self.client = client
    self.probe = probe
    self.options = options
    instrumentation = StoreInstrumentation(backend: .postgresql, tracesKeys: options.tracesKeys)
    reachability = ServerReachability(
      gauge: instrumentation.metrics?.reachable, events: events, logger: options.logger)
    let events = events
    cache = options.localCachePath.map { SharedCache(path: $0, logger: options.logger, events: events) }
    notifier = SharedNotifier(
      client: client, timeout: options.operationTimeout, logger: options.logger ?? SharedSchema.quiet,
      prepares: options.preparesStatements)
  }

  var logger: Logger { options.logger ?? SharedSchema.quiet }

  // MARK: Schema

  /// Applies the migrations once per store (again after a failure).
  ///
  /// A caller waits at most ``PostgresStoreOptions/operationTimeout``, like for any call: a replica
  /// started while the server is down fails its first call in that time, not in a minute — or at once,
  /// with the cause, when the connection probe finds that no connection can be made. The migration
  /// itself goes on after a caller gave up, and is waited for by the next one: creating tables may take
  /// longer than an ordinary call (a loaded server, a lock held by another replica that migrates, a
  /// server that is not back yet). Only one that failed (it forgets itself then), or has not finished
  /// within ``longestMigration``, is started again.
  func ensureSchema() async throws {
    if schemaReady.withLock({ $0 }) { return }
    let now = ContinuousClock.now
    let longest = max(options.operationTimeout, Self.longestMigration)
    let slot = schemaTask
    let task = slot.withLock { running -> Task<Void, any Error> in
      if let running, now - running.started < longest { return running.task }
      running?.task.cancel()
      let id = (running?.id ?? 0) + 1
      let created = Task { [client, options, readOnlyMigration] in
        do {
          let access = try await SharedSchema.apply(client: client, logger: options.logger)
          if case .readOnly(let migration) = access {
            readOnlyMigration.withLock { $0 = migration }
            options.logger?.warning(
              "A newer release made the shared tables read-only for this one; writes throw until it is upgraded",
              metadata: ["migration": "\(migration)"])
          }
        } catch {
          // Failed: the next caller starts it again (callers waiting for this one get the error).
          slot.withLock { if $0?.id == id { $0 = nil } }
          throw error
        }
      }
      running = (created, now, id)
      return created
    }
    try await bounded("prepare the schema") { try await task.value }
    schemaReady.withLock { $0 = true }
  }

  /// Prepares the schema, then throws ``SharedStoreError/readOnlyMigration(migration:)`` when a newer
  /// release made the database read-only for this one: every write path calls it before writing.
  func ensureWritable() async throws {
    try await ensureSchema()
    if let migration = readOnlyMigration.withLock({ $0 }) {
      throw SharedStoreError.readOnlyMigration(migration: migration)
    }
  }

  /// How long a migration may run before a caller starts it again.
  static let longestMigration = Duration.seconds(60)

  // MARK: Keys

  func remember(key: String, hash: String) {
    keysByHash.withLock { $0[hash] = key }
  }

  func key(forHash hash: String) -> String? {
    keysByHash.withLock { $0[hash] }
  }

  func noteUndecodable(key: String, version: Int64) {
    undecodable.withLock { $0[key] = version }
  }

  func undecodableVersion(of key: String) -> Int64? {
    undecodable.withLock { $0[key] }
  }

  // MARK: Writes

  /// Commits `writes` in one transaction, in the order given; returns each one's version, or nil for an
  /// optimistic write whose expected version was no longer the latest (nothing is committed then).
  ///
  /// Returns once the data committed; the notifications are queued then and sent after, and their
  /// failure is logged, never thrown: the versions are committed, and other replicas' catch-up brings
  /// them.
  func commit(_ writes: [SharedWrite], operation: String) async throws -> [CommittedVersion]? {
    try await ensureWritable()
    let retention = options.retention
    let prepared = options.preparesStatements
    // A lone write while writes come one at a time sends its own notification.
    let inline =
      writes.count == 1 && notifier.claimInline()
      ? SharedNotification.InlineParts(write: writes[0], origin: origin) : nil
    defer { if inline != nil { notifier.endInline() } }
    let (committed, notified) = try await bounded(operation) {
      [client, notifier] () async throws -> ([CommittedVersion]?, Bool) in
      if writes.count == 1 {
        if let inline {
          do {
            let version = try await Self.run(
              writes[0], retention: retention, prepared: prepared, notifying: inline, on: client)
            return (version.map { [$0] }, true)
          } catch let error as PSQLError
            where error.serverInfo != nil
            && SharedNotifier.isNotificationRefusal(SharedDatabase.describe(error))
          {
            // The server refused the statement for its notification (`pg_notify` not granted to this
            // role, the notification queue full), so nothing of it committed; the write must not fail
            // for it: it goes again without, and the notifier sends (or logs) the notification. Any
            // other refusal is the write's own, thrown as it would be without the notification.
            notifier.inlineRefused(SharedDatabase.describe(error))
          }
        }
        let version = try await Self.run(writes[0], retention: retention, prepared: prepared, on: client)
        return (version.map { [$0] }, false)
      }
      return try await client.withConnection { connection in
        try await connection.query("BEGIN", logger: SharedSchema.quiet)
        do {
          var committed: [CommittedVersion] = []
          for write in writes {
            guard
              let version = try await Self.run(
                write, retention: retention, prepared: prepared, on: connection)
            else {
              try await connection.query("ROLLBACK", logger: SharedSchema.quiet)
              return (nil, false)
            }
            committed.append(version)
          }
          try await connection.query("COMMIT", logger: SharedSchema.quiet)
          return (committed, false)
        } catch {
          _ = try? await connection.query("ROLLBACK", logger: SharedSchema.quiet)
          throw error
        }
      }
    }
    guard let committed else { return nil }
    if let cache {
      for (write, version) in zip(writes, committed) {
        cache.record(
          StoredRow(
            key: write.key, version: version.version, writtenAtMilliseconds: version.writtenAtMilliseconds,
            payload: Data(write.payload.utf8), schemaVersion: write.schemaVersion,
            attribution: write.attribution))
      }
    }
    if !notified {
      notifier.send(
        zip(writes, committed).map { SharedNotification(write: $0, committed: $1, origin: origin) })
    }
    return committed
  }

  private static func run(
    _ write: SharedWrite, retention: HistoryRetention, prepared: Bool,
    notifying: SharedNotification.InlineParts? = nil, on runner: some SharedQueryRunner
  ) async throws -> CommittedVersion? {
    guard
      let (version, milliseconds) = try await SharedWriteStatement.run(
        write, retention: retention, prepared: prepared, notifying: notifying, on: runner)
    else { return nil }
    return CommittedVersion(
      key: write.key, version: version, writtenAtMilliseconds: milliseconds,
      schemaVersion: write.schemaVersion,
      attribution: write.attribution)
  }

  // MARK: Reads

  /// The newest row of `key`; nil if it was never written.
  func latestRow(key: String, via route: ReadRoute = .pool) async throws -> StoredRow? {
    let row = try await rows(
      SharedStatements.latest(keyHash: KeyHash.of(key)), key: key, operation: "read", via: route
    ).first
    // Only live keys are read this way: the cache keeps what the server said of them.
    if let row { cache?.record(row) }
    return row
  }

  /// The row of `key` at `version`; nil if it was never written or was pruned.
  func row(key: String, version: Int64) async throws -> StoredRow? {
    try await rows(
      SharedStatements.row(keyHash: KeyHash.of(key), version: version), key: key, operation: "value(at:)"
    ).first
  }

  /// At most `limit` rows of `key` after `version`, oldest first.
  func rows(key: String, after version: Int64, limit: Int) async throws -> [StoredRow] {
    try await rows(
      SharedStatements.rows(keyHash: KeyHash.of(key), after: version, limit: limit), key: key,
      operation: "changes(since:)")
  }

  /// The kept rows of `key`, newest first.
  func history(key: String, limit: Int?) async throws -> [StoredRow] {
    try await rows(
      SharedStatements.history(keyHash: KeyHash.of(key), limit: limit), key: key, operation: "history")
  }

  /// Every live key (written, not removed), in UTF-8 byte order.
  func keys() async throws -> [String] {
    try await keys(prefix: "")
  }

  /// The latest version on the server of each of the given key hashes that was ever written.
  func heads(of hashes: [String], via route: ReadRoute = .pool) async throws -> [String: Int64] {
    try await bounded("catch up") { [client] in
      var heads: [String: Int64] = [:]
      let rows = try await route.query(
        "SELECT key_hash, version FROM pld_heads WHERE key_hash = ANY(\(hashes))", client: client)
      for try await (hash, version) in rows.decode((String, Int64).self) { heads[hash] = version }
      return heads
    }
  }

  /// The xmin of a snapshot taken now (see ``SharedChangeFeed``).
  func horizon(via route: ReadRoute = .pool) async throws -> Int64 {
    try await bounded("catch up") { [client] in
      let rows = try await route.query(
        PostgresQuery(unsafeSQL: "SELECT \(SharedStatements.horizon)"), client: client)
      for try await horizon in rows.decode(Int64.self) { return horizon }
      throw SharedStoreError.serverUnavailable(operation: "catch up", reason: "no snapshot horizon returned")
    }
  }

  /// The newest version of every key written or removed by a transaction with an id of at least
  /// `since`, with the key, and the horizon of the snapshot that read them (see ``SharedChangeFeed``).
  func changedHeads(
    since: Int64, via route: ReadRoute = .pool
  ) async throws -> (horizon: Int64, heads: [String: (key: String, version: Int64)]) {
    try await bounded("catch up") { [client] in
      var horizon: Int64?
      var heads: [String: (key: String, version: Int64)] = [:]
      let rows = try await route.query(SharedStatements.changed(since: since), client: client)
      for try await (seen, hash, version, key) in rows.decode((Int64, String?, Int64?, String?).self) {
        horizon = seen
        if let hash, let version, let key { heads[hash] = (key, version) }
      }
      guard let horizon else {
        throw SharedStoreError.serverUnavailable(
          operation: "catch up", reason: "no snapshot horizon returned")
      }
      return (horizon, heads)
    }
  }

  private func rows(
    _ query: PostgresQuery, key: String, operation: String, via route: ReadRoute = .pool
  ) async throws -> [StoredRow] {
    try await ensureSchema()
    return try await bounded(operation) { [client] in
      var rows: [StoredRow] = []
      let sequence = try await route.query(query, client: client)
      for try await (version, payload, schemaVersion, milliseconds, author, reason) in sequence.decode(
        (Int64, String, Int, Int64, String?, String?).self)
      {
        rows.append(
          StoredRow(
            key: key, version: version, writtenAtMilliseconds: milliseconds, payload: Data(payload.utf8),
            schemaVersion: schemaVersion, attribution: WriteAttribution(storedAuthor: author, reason: reason))
        )
      }
      return rows
    }
  }

  /// Runs `read` until it succeeds or fails for another reason than an unavailable server (waiting
  /// between attempts as a reconnect does); nil when the calling task is cancelled.
  func retryingWhileUnavailable<Result: Sendable>(
    _ read: @Sendable () async throws -> Result
  ) async throws -> Result? {
    var delay = options.reconnectDelay.lowerBound
    while !Task.isCancelled {
      do {
        return try await read()
      } catch SharedStoreError.serverUnavailable, SharedStoreError.timedOut {
        try? await Task.sleep(for: delay)
        delay = min(delay * 2, options.reconnectDelay.upperBound)
      } catch is CancellationError {
        return nil
      }
    }
    return nil
  }
}
