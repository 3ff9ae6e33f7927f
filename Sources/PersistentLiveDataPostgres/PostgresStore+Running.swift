import PersistentLiveDataBackend
import PostgresNIO
import ServiceLifecycle

extension PostgresStore {
  /// Creates or migrates the tables, then listens for other replicas' writes until cancelled or
  /// gracefully shut down; reconnects by itself and catches up by version after every reconnect.
  ///
  /// Without it a replica sees only its own writes. A server that is down when it starts, or goes away
  /// later, is waited for (``PostgresStoreOptions/reconnectDelay``). A cancellation or a graceful
  /// shutdown ends it normally, whatever it was doing — preparing the schema included, with the server
  /// unreachable, halted or refusing the connection. It throws only for a schema this library cannot
  /// use. When it ends, the local cache (``PostgresStoreOptions/localCachePath``) holds every version
  /// this replica saw. A store made with ``init(configuration:options:)`` runs its client here too, and
  /// stops it after the last notifications went out.
  ///
  /// ```swift
  /// let group = ServiceGroup(services: [client, store], logger: logger)
  /// try await group.run()
  /// ```
  /// - Throws: ``SharedStoreError/schemaTooNew(found:supported:)`` or
  ///   ``SharedStoreError/migrationFailed(version:reason:)``.
  public func run() async throws {
    let client = startOwnedClient()
    do {
      try await listen()
    } catch {
      await stop(client)
      throw error
    }
    await stop(client)
  }

  /// Listens until cancelled or shut down, then sends the last notifications and flushes the cache.
  private func listen() async throws {
    let listener = SharedListener(database: database)
    do {
      try await cancelWhenGracefulShutdown {
        try await listener.run()
      }
    } catch let error where error is CancellationError || Task.isCancelled || Task.isShuttingDownGracefully {
      // An end asked for, not an error: what was being done (the schema, a reconnect) is given up.
    } catch {
      await database.notifier.flush(within: .seconds(1))
      database.cache?.flush()
      throw error
    }
    // After a graceful shutdown, the notifications of the last writes go out before the client stops (a
    // ServiceGroup stops the store before the client listed before it). A cancelled task waits for none.
    await database.notifier.flush(within: .seconds(1))
    // And the local cache holds the last versions this replica saw.
    database.cache?.flush()
  }

  /// Runs the store's own client, the first time only, in a task that does not take part in the
  /// caller's graceful shutdown: the client outlives the listener until ``stop(_:)``.
  private func startOwnedClient() -> Task<Void, Never>? {
    guard let ownedClient else { return nil }
    let first = ownedClientStarted.withLock { started -> Bool in
      defer { started = true }
      return !started
    }
    guard first else {
      database.logger.warning("PostgresStore.run() was called again: its client runs only once")
      return nil
    }
    return Task.detached { await ownedClient.run() }
  }

  /// Stops the store's own client, waiting for it a moment at most.
  private func stop(_ client: Task<Void, Never>?) async {
    guard let client else { return }
    client.cancel()
    _ = try? await withDeadline(.seconds(2), operation: "stop the client") { await client.value }
  }
}
