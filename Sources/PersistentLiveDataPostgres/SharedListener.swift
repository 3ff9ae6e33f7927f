import Logging
import PersistentLiveData
import PostgresNIO

/// What ``PostgresStore/run()`` does: hears other replicas' writes and keeps every live value current.
///
/// Notifications are not durable: one sent while this replica was disconnected is lost. So after every
/// (re)connect it listens first, then catches up by version for every live key, then consumes — a write
/// committed in between arrives twice at most, and a version already in memory is ignored. A timer
/// catches up as well (``PostgresStoreOptions/catchUpInterval``), for a connection that died without a
/// word — and for this store's own write whose answer was lost with its connection. A notification says
/// `VERSION ORIGIN k KEY` or `VERSION ORIGIN h HASH`; the row itself is read only when the version is
/// newer than memory.
///
/// ```swift
/// try await SharedListener(database: database).run()   // until cancelled
/// ```
struct SharedListener: Sendable {
  let database: SharedDatabase
  private let refreshRequests = RefreshRequests()

  init(database: SharedDatabase) {
    self.database = database
  }

  func run() async throws {
    try await prepareSchema()
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await listen() }
      group.addTask { await catchUpPeriodically() }
      group.addTask { await refreshNotifiedKeys() }
      await group.next()
      group.cancelAll()
    }
  }

  /// Applies the schema, waiting for a server that is not there yet.
  private func prepareSchema() async throws {
    var delay = database.options.reconnectDelay.lowerBound
    while true {
      do {
        try await database.ensureSchema()
        return
      } catch SharedStoreError.serverUnavailable, SharedStoreError.timedOut {
        try Task.checkCancellation()
        database.logger.info("Waiting for the PostgreSQL server to prepare the schema")
        try await Task.sleep(for: delay)
        delay = min(delay * 2, database.options.reconnectDelay.upperBound)
      }
    }
  }

  private func listen() async {
    let delays = database.options.reconnectDelay
    // Failed attempts since the last session that listened; reset by a session once it listens.
    let failures = Locked(0)
    while !Task.isCancelled {
      do {
        try await listenOnce {
          let failed = failures.withLock { failed in
            defer { failed = 0 }
            return failed
          }
          if failed > 0 {
            database.logger.info("Listening again; caught up", metadata: ["attempts": "\(failed)"])
          }
        }
      } catch {
        if Task.isCancelled { return }
        let failed = failures.withLock { failed in
          failed += 1
          return failed
        }
        if failed == 1 {
          database.logger.warning(
            "Lost the connection that listens for other replicas' writes; reconnecting",
            metadata: ["error": "\(SharedDatabase.describe(error))"])
        }
        // 10 ms, 20 ms, 40 ms … up to the longest delay.
        let delay = min(delays.lowerBound * (1 << min(failed - 1, 16)), delays.upperBound)
        try? await Task.sleep(for: delay)
      }
    }
  }

  /// One listening session: lease a connection, `LISTEN`, catch up, call `established`, consume until the
  /// connection drops.
  ///
  /// The session runs in a task of its own and is given up (cancelled, not awaited) when it has not
  /// started listening within the operation timeout: a lease or a `LISTEN` sent while the server restarts
  /// can hang far longer than that, and the next attempt must not wait for it.
  private func listenOnce(established: @escaping @Sendable () -> Void) async throws {
    let started = ChangeSignal()
    let noticed = started.generation
    let session = Task {
      defer { started.signal() }
      try await database.client.withConnection { connection in
        try await connection.listen(on: SharedDatabase.channel) { notifications in
          try await catchUp()
          established()
          started.signal()
          for try await notification in notifications {
            await receive(notification.payload)
          }
        }
      }
    }
    do {
      try await withDeadline(database.options.operationTimeout, operation: "listen") {
        _ = await started.wait(after: noticed)
      }
    } catch {
      session.cancel()
      throw error
    }
    try await withTaskCancellationHandler {
      try await session.value
    } onCancel: {
      session.cancel()
    }
  }

  private func catchUpPeriodically() async {
    while !Task.isCancelled {
      try? await Task.sleep(for: database.options.catchUpInterval)
      if Task.isCancelled { return }
      do {
        try await catchUp()
      } catch {
        database.logger.debug("Catch-up failed", metadata: ["error": "\(SharedDatabase.describe(error))"])
      }
    }
  }

  /// Compares every live key's version with the server's and reads those that are behind.
  func catchUp() async throws {
    let live = database.registry.liveInstances
    database.changeSignal.signal()
    guard !live.isEmpty else { return }
    let byHash = Dictionary(live.map { (KeyHash.of($0.key), $0) }, uniquingKeysWith: { first, _ in first })
    let heads = try await database.heads(of: Array(byHash.keys))
    for (hash, version) in heads {
      guard let instance = byHash[hash], version > instance.version,
        database.undecodableVersion(of: instance.key) != version
      else { continue }
      try await bringUp(instance)
    }
  }

  /// Handles one notification: `VERSION ORIGIN k KEY` or `VERSION ORIGIN h HASH`. This store's own
  /// writes moved memory and woke its readers already.
  private func receive(_ payload: String) async {
    let parts = payload.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
    guard parts.count == 4, let version = Int64(parts[0]), parts[1] != database.origin else { return }
    database.changeSignal.signal()
    let named = String(parts[3])
    let key = parts[2] == "h" ? database.key(forHash: named) : named
    guard let key, let instance = database.registry.instance(for: key), version > instance.version else {
      return
    }
    // Read elsewhere: a read sent as the server restarts can hang until its deadline, and this loop must
    // notice at once that its connection dropped.
    refreshRequests.request(instance)
  }

  /// Reads the rows of notified keys, a batch at a time, concurrently; a read that fails is tried again.
  private func refreshNotifiedKeys() async {
    while !Task.isCancelled {
      let batch = await refreshRequests.next()
      guard !batch.isEmpty else { return }
      await withTaskGroup(of: Void.self) { group in
        for instance in batch {
          group.addTask {
            do {
              try await bringUp(instance)
            } catch {
              // A pooled connection the restart killed, say: read it again shortly.
              database.logger.debug("Reading a notified version failed", metadata: ["error": "\(error)"])
              try? await Task.sleep(for: .milliseconds(100))
              if !Task.isCancelled { refreshRequests.request(instance) }
            }
          }
        }
      }
    }
  }

  private func bringUp(_ instance: any StoredLiveValue) async throws {
    guard let row = try await database.latestRow(key: instance.key) else { return }
    instance.receive(row, onMainActor: false).notifyObservers()
    // A version this replica cannot decode is logged once, not at every catch-up.
    if instance.version < row.version { database.noteUndecodable(key: instance.key, version: row.version) }
  }
}

/// The live values a notification said are behind, collected until the reader takes them: a burst of
/// notifications of one key becomes one read.
final class RefreshRequests: Sendable {
  private let pending = Locked<[String: any StoredLiveValue]>([:])
  private let signal = ChangeSignal()

  func request(_ instance: any StoredLiveValue) {
    pending.withLock { $0[instance.key] = instance }
    signal.signal()
  }

  /// The requested values, waiting for one if there are none; empty when the task is cancelled.
  func next() async -> [any StoredLiveValue] {
    while true {
      let seen = signal.generation
      let batch = pending.withLock { pending in
        defer { pending.removeAll() }
        return Array(pending.values)
      }
      if !batch.isEmpty { return batch }
      guard await signal.wait(after: seen) else { return [] }
    }
  }
}
