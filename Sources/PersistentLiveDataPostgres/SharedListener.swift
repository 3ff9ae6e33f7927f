import Logging
import PersistentLiveDataBackend
import PostgresNIO

/// What ``PostgresStore/run()`` does: hears other replicas' writes and keeps every live value current.
///
/// Notifications are not durable: one sent while this replica was disconnected is lost, and so is one
/// whose writer died between its commit and its notification (``SharedNotifier`` sends it after the
/// commit). So after every (re)connect it listens first, then catches up by version for every live key,
/// then consumes — a write committed in between arrives twice at most, and a version already in memory is
/// ignored. A timer catches up as well (``PostgresStoreOptions/catchUpInterval``), for a connection that
/// died without a word, a notification that was never sent, and this store's own write whose answer was
/// lost with its connection: it asks the server which keys changed since its last look
/// (``SharedChangeFeed``), not about every live key. A notification says `VERSION ORIGIN k KEY` or
/// `VERSION ORIGIN h HASH`; the row itself is read only when the version is newer than memory.
///
/// Everything a listening session reads goes over the connection it listens on: that connection is
/// known to be alive while notifications arrive, and when it drops, its reads end with it and the next
/// session's catch-up replaces them. (A pooled connection leased while the server restarts can hang a
/// read until its deadline.) While it listens, the connection's `application_name` is `pld-listener`.
///
/// ```swift
/// try await SharedListener(database: database).run()   // until cancelled
/// ```
struct SharedListener: Sendable {
  /// The `application_name` of a listening connection while it listens: `pg_stat_activity` shows each
  /// replica's listener under it.
  static let applicationName = "pld-listener"

  let database: SharedDatabase

  init(database: SharedDatabase) {
    self.database = database
  }

  func run() async throws {
    guard try await prepareSchema() else { return }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await listen() }
      group.addTask { await catchUpPeriodically() }
      group.addTask { await buildIndexes() }
      group.addTask { [database] in await SharedReplicas.heartbeat(database: database) }
      await group.next()
      group.cancelAll()
    }
  }

  /// Applies the schema, waiting for a server that is not there yet (or refuses the connection: the
  /// probe's backoff spaces the attempts then); false when cancelled first. The cause is logged when it
  /// changes, not at every attempt.
  private func prepareSchema() async throws -> Bool {
    var delay = database.options.reconnectDelay.lowerBound
    var cause: String?
    while !Task.isCancelled {
      let failure: String
      do {
        try await database.ensureSchema()
        return true
      } catch {
        if Task.isCancelled || error is CancellationError { return false }
        switch error {
        case SharedStoreError.serverUnavailable(_, let reason): failure = reason
        case SharedStoreError.timedOut: failure = "\(error)"
        default: throw error
        }
      }
      if failure != cause {
        database.logger.info(
          "Waiting for the PostgreSQL server to prepare the schema", metadata: ["reason": "\(failure)"])
        cause = failure
      } else {
        database.logger.debug("Still waiting for the PostgreSQL server to prepare the schema")
      }
      do { try await Task.sleep(for: delay) } catch { return false }
      delay = min(delay * 2, database.options.reconnectDelay.upperBound)
    }
    return false
  }

  private func listen() async {
    let delays = database.options.reconnectDelay
    // Failed attempts since the last session that listened, and how many of them ran out of time.
    var failures = 0
    var slow = 0
    // Sessions that listened: each one after the first is a reconnect (`pld.postgres.reconnects`).
    var sessions = 0
    while !Task.isCancelled {
      // A healthy server lets a session listen and catch up in milliseconds, but a lease or a LISTEN sent
      // while the server restarts can hang until its deadline: a short deadline first, so that a replica
      // is current soon after a restart, doubling after each attempt that ran out of time (a loaded
      // server or a large catch-up still gets there), up to the operation timeout. A refused connection
      // says nothing of the server's speed and leaves the deadline as it is.
      let attempt = min(Self.firstListenDeadline * (1 << min(slow, 16)), database.options.operationTimeout)
      do {
        try await listenOnce(deadline: attempt) {
          if failures > 0 {
            database.logger.info("Listening again; caught up", metadata: ["attempts": "\(failures)"])
          }
          failures = 0
          slow = 0
          database.reachability.record(reached: true)
          if sessions > 0 { database.instrumentation.countReconnect() }
          sessions += 1
        }
      } catch {
        if Task.isCancelled { return }
        database.reachability.record(reached: false, reason: SharedDatabase.describe(error))
        failures += 1
        if case SharedStoreError.timedOut = error { slow += 1 }
        if failures == 1 {
          database.logger.warning(
            "Lost the connection that listens for other replicas' writes; reconnecting",
            metadata: ["error": "\(SharedDatabase.describe(error))"])
        }
        // 10 ms, 20 ms, 40 ms … up to the longest delay.
        let delay = min(delays.lowerBound * (1 << min(failures - 1, 16)), delays.upperBound)
        try? await Task.sleep(for: delay)
      }
    }
  }

  /// How long the first attempt to listen (after a start or a lost connection) may take before it is
  /// given up and made again.
  static let firstListenDeadline = Duration.milliseconds(500)

  /// One listening session: lease a connection, `LISTEN`, catch up, name the connection, call `established`
  /// (unless the session was given up meanwhile), consume until the connection drops.
  ///
  /// The session runs in a task of its own and is given up (cancelled, not awaited) when it has not
  /// started listening within `deadline`: a lease or a `LISTEN` sent while the server restarts can hang
  /// far longer than that, and the next attempt must not wait for it. The deadline covers those two steps
  /// only. Once the server answered the `LISTEN`, the session is kept: the catch-up's reads each have the
  /// operation timeout, and a failure ends the session. (When the deadline covered the catch-up too, a
  /// slow machine lost every session that had listened and was catching up — under ThreadSanitizer with
  /// every suite running on two cores, for longer than the operation timeout, so that the listener never
  /// came back — and a catch-up waiting on a lock was sent again by each new attempt.) Whether the session
  /// is kept or given up is decided once, by whichever comes first: a session that listened just before
  /// the deadline is not thrown away because its waiter ran late.
  private func listenOnce(deadline: Duration, established: () -> Void) async throws {
    let progress = ChangeSignal()
    let phase = ListenSession()
    let session = Task {
      defer {
        phase.end()
        progress.signal()
      }
      try await database.client.withConnection { connection in
        do {
          try await connection.listen(on: SharedDatabase.channel) { notifications in
            // The server answered the LISTEN: from here on the deadline no longer applies.
            guard phase.keep() else { throw CancellationError() }
            progress.signal()
            let route = ReadRoute.connection(connection)
            try await catchUp(via: route)
            // Collections are caught up by the change feed's look, which the comparison above does not
            // do: it runs now rather than at the end of the interval (what changed while no session
            // listened had no notification here).
            if !database.collections.isEmpty { database.lookRequests.signal() }
            _ = try await database.bounded("listen") {
              try await connection.query(
                "SET application_name = '\(unescaped: SharedListener.applicationName)'",
                logger: SharedSchema.quiet)
            }
            // Named only once it listens and caught up: pg_stat_activity shows a listener then.
            phase.markListening()
            progress.signal()
            try await consume(notifications, readingOn: route)
          }
        } catch {
          await Self.closeBeforeRelease(connection)
          throw error
        }
        await Self.closeBeforeRelease(connection)
      }
    }
    do {
      try await withDeadline(deadline, operation: "listen") {
        await progress.wait(until: { phase.isKeptOrEnded })
      }
    } catch {
      if phase.giveUp() {
        session.cancel()
        throw error
      }
    }
    // Kept: wait (the catch-up's reads are bounded) until it listens, or ends.
    await progress.wait(until: { phase.isListeningOrEnded })
    if phase.isListening { established() }
    try await withTaskCancellationHandler {
      try await session.value
    } onCancel: {
      session.cancel()
    }
  }

  /// Takes notifications until the connection drops, and reads the rows they announce beside it. The
  /// reads are children of this call: none is left running on the connection once it is handed back.
  private func consume(
    _ notifications: PostgresNotificationSequence, readingOn route: ReadRoute
  ) async throws {
    let reads = NotifiedReads()
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for try await notification in notifications {
          receive(notification.payload, into: reads)
        }
      }
      group.addTask {
        try await reads.perform { key in try await bringUp([key], via: route) }
      }
      defer { group.cancelAll() }
      // The first to end is the notifications (the connection dropped) or a read that failed (the
      // connection is gone or stuck, and its notifications may never end): the other ends with it.
      try await group.next()
    }
  }

  /// Builds the shared schema's concurrent indexes (``SharedSchema/concurrentIndexes``) once the schema
  /// is ready, trying again after a failure, in a task of its own; waits until the listener ends.
  ///
  /// The build is not waited for when the store stops: a `CREATE INDEX CONCURRENTLY` waits on the server
  /// for every transaction older than itself, and a statement in flight cannot be cancelled from here;
  /// the stop cancels the task, and the client's shutdown ends its statement. (Awaited, it held up a
  /// replica's graceful shutdown for as long as the server's build took.)
  private func buildIndexes() async {
    let database = database
    let build = Task {
      var delay = database.options.reconnectDelay.upperBound
      while !Task.isCancelled {
        do {
          try await SharedSchema.buildConcurrentIndexes(
            client: database.client, logger: database.options.logger)
          return
        } catch {
          if Task.isCancelled { return }
          database.logger.warning(
            "Could not build a shared-store index; trying again",
            metadata: ["error": "\(SharedDatabase.describe(error))"])
          try? await Task.sleep(for: delay)
          delay = min(delay * 2, .seconds(60))
        }
      }
    }
    // The group ends when its first task does: this one waits, without the build, for the others.
    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    build.cancel()
  }

  private func catchUpPeriodically() async {
    while !Task.isCancelled {
      await pause(database.options.catchUpInterval)
      if Task.isCancelled { return }
      do {
        try await catchUpChanges()
      } catch {
        database.logger.debug("Catch-up failed", metadata: ["error": "\(SharedDatabase.describe(error))"])
      }
    }
  }

  /// Waits `interval`, or less when a session that started listening asks for a look
  /// (``SharedDatabase/lookRequests``).
  private func pause(_ interval: Duration) async {
    let seen = database.lookRequests.generation
    await withTaskGroup(of: Void.self) { group in
      group.addTask { try? await Task.sleep(for: interval) }
      group.addTask { _ = await database.lookRequests.wait(after: seen) }
      await group.next()
      group.cancelAll()
    }
  }

  /// Brings every live key up to date with what changed on the server since the last look: the
  /// safety net for a notification that never came. The first look (and one after a key became live
  /// too early for the last) compares every live key.
  func catchUpChanges(via route: ReadRoute = .pool) async throws {
    try await database.instrumentation.traceCatchUp { try await catchUpChangedKeys(via: route) }
  }

  /// The body of ``catchUpChanges(via:)``.
  private func catchUpChangedKeys(via route: ReadRoute) async throws {
    let feed = database.changeFeed
    let since = feed.begin()
    if since == 0 {
      // A snapshot taken before the comparison's: whatever the comparison missed, it did not see.
      let horizon = try await database.horizon(via: route)
      try await catchUpLiveKeys(via: route)
      // The comparison reads live keys only. A collection opened before this first look lowered the feed
      // to its own read's snapshot: what changed since then is read as a later look would.
      if let opened = feed.lowered, !database.collections.isEmpty {
        _ = try await bringUpChanged(since: opened, via: route)
      }
      feed.end(horizon: horizon)
      return
    }
    database.changeSignal.signal()
    let horizon = try await bringUpChanged(since: since, via: route)
    try await confirmStaleKeys(via: route)
    feed.end(horizon: horizon)
  }

  /// Reads every key written or removed by a transaction with an id of at least `since` that a live
  /// value or collection here is behind on; returns the horizon of the snapshot that found them.
  private func bringUpChanged(since: Int64, via route: ReadRoute) async throws -> Int64 {
    let (horizon, heads) = try await database.changedHeads(since: since, via: route)
    try await bringUp(heads.values.filter { isBehind($0.key, $0.version) }.map(\.key), via: route)
    return horizon
  }

  /// Compares the live keys that started from the local cache and were not confirmed since with the
  /// server, and reads those that are behind: a key opened from the cache after the last full comparison
  /// is current within one interval of the server's return, even if nothing changed it there.
  private func confirmStaleKeys(via route: ReadRoute) async throws {
    guard database.cache != nil else { return }
    let stale = database.registry.liveInstances.filter { ($0 as? any SharedStaleness)?.isStale == true }
    guard !stale.isEmpty else { return }
    try await compare(stale, via: route)
  }

  /// Compares every live key's version with the server's and reads those that are behind.
  func catchUp(via route: ReadRoute) async throws {
    try await database.instrumentation.traceCatchUp { try await catchUpLiveKeys(via: route) }
  }

  /// The body of ``catchUp(via:)``.
  private func catchUpLiveKeys(via route: ReadRoute) async throws {
    let live = database.registry.liveInstances
    database.changeSignal.signal()
    guard !live.isEmpty else { return }
    try await compare(live, via: route)
  }

  /// Reads those of `live` that are behind the server, and confirms every one of them (the server
  /// answered for each).
  private func compare(_ live: [any StoredLiveValue], via route: ReadRoute) async throws {
    let byHash = Dictionary(live.map { (KeyHash.of($0.key), $0) }, uniquingKeysWith: { first, _ in first })
    let heads = try await database.heads(of: Array(byHash.keys), via: route)
    var behind: [String] = []
    for (hash, version) in heads {
      guard let instance = byHash[hash], version > instance.storedVersion,
        database.undecodableVersion(of: instance.key) != version
      else { continue }
      behind.append(instance.key)
    }
    try await bringUp(behind, via: route)
    for instance in live { (instance as? any SharedStaleness)?.confirm() }
  }

  /// Handles one notification (``SharedNotification/Format``); its own writes moved memory already.
  private func receive(_ payload: String, into reads: NotifiedReads) {
    guard let entries = database.entries(of: payload) else { return }
    var heard = false
    let origin = database.origin.utf8
    for entry in entries where !entry.origin.elementsEqual(origin) {
      if !heard { database.notifier.writers.heard(entry.origin) }
      heard = true
      let named = String(Substring(entry.name))
      // A key notified by its hash (longer than a payload holds) that no live value has is not known
      // here: a collection that holds it gets it from the periodic catch-up, which reads keys.
      guard let key = entry.isHash ? database.key(forHash: named) : named, isBehind(key, entry.version)
      else { continue }
      if let row = entry.row {
        // The row came with its entry: applied here, without a read (newer than memory, as isBehind
        // said; a read of the key still under way brings an older or the same version, and is ignored).
        let stored = row.stored(key: key, version: entry.version)
        database.cache?.record(stored)
        database.applyOtherReplicas(.row(stored), of: key)
        continue
      }
      // Read beside this loop: it must notice at once that its connection dropped.
      reads.request(key)
    }
    if heard { database.changeSignal.signal() }
  }

  /// Whether the live value of `key`, or a live collection that holds it, is behind `version`.
  private func isBehind(_ key: String, _ version: Int64) -> Bool {
    if let instance = database.registry.instance(for: key), version > instance.storedVersion,
      database.undecodableVersion(of: key) != version
    {
      return true
    }
    guard !database.collections.isEmpty, let known = database.collections.memberVersion(of: key) else {
      return false
    }
    return version > known
  }

  /// Reads the newest state of `key` and moves its live value and the collections that hold it there.
  /// Reads the newest state of each of `keys`, then moves them together: the live collections that hold
  /// several of them (a transaction's members) take them as one version.
  private func bringUp(_ keys: [String], via route: ReadRoute) async throws {
    guard !keys.isEmpty else { return }
    var states: [(key: String, state: StoredKeyState)] = []
    states.reserveCapacity(keys.count)
    for key in keys { states.append((key, try await database.latestState(key: key, via: route))) }
    database.applyOtherReplicas(states)
  }
}
