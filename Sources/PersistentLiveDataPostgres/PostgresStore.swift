import PersistentLiveDataBackend
public import PostgresNIO
public import ServiceLifecycle

/// A store whose versions live on a PostgreSQL server that several replicas of a service share.
///
/// Each replica makes its own `PostgresStore` on its own `PostgresClient` and runs both as services (in
/// a `ServiceGroup`, say). ``liveData(_:default:)`` gives the one ``SharedLiveData`` of a key; writes are
/// committed on the server and announced to every replica with `NOTIFY`; ``run()`` listens, and after every
/// reconnect catches up by version, so every replica ends on the latest version of every live key.
///
/// ```swift
/// let client = PostgresClient(configuration: configuration)
/// let store = PostgresStore(client: client)
/// let group = ServiceGroup(services: [client, store], logger: logger)
/// async let running: Void = group.run()
///
/// let flags = try await store.liveData("feature-flags", default: FeatureFlags())
/// try await flags.update { $0.newCheckout = true }
/// ```
public final class PostgresStore: Service, Sendable {
  let database: SharedDatabase
  /// The client this store made from a configuration, which ``run()`` runs; nil for a client of the app.
  let ownedClient: PostgresClient?
  /// Whether ``run()`` started the owned client (it runs once).
  let ownedClientStarted = Locked(false)

  /// A store on the server `client` connects to. Nothing is sent before the first call or ``run()``.
  ///
  /// The app runs `client` itself. A connection the pool cannot make is retried by the pool without a
  /// word: calls then end with ``SharedStoreError/timedOut(operation:after:)``. A store made with
  /// ``init(configuration:options:)`` names the cause instead (a refused port, a missing socket, a role,
  /// database or password the server refuses).
  ///
  /// ```swift
  /// let store = PostgresStore(client: client, options: PostgresStoreOptions(retention: .last(100)))
  /// ```
  /// - Parameters:
  ///   - client: A client that runs (as a service, or in a task of its own) while the store is used.
  ///   - options: Retention, the decode-failure policy, the logger and timeouts.
  public init(client: PostgresClient, options: PostgresStoreOptions = PostgresStoreOptions()) {
    database = SharedDatabase(client: client, options: options)
    ownedClient = nil
  }

  /// A store on the same database as an open one: what a collection's `member` opens keys with.
  init(opened database: SharedDatabase) {
    self.database = database
    ownedClient = nil
  }

  /// A store with a client of its own on `configuration`, which ``run()`` runs: the store is then the
  /// one service to run. Nothing is sent before the first call or ``run()``.
  ///
  /// A connection that cannot be made is named as soon as the first attempt fails: calls throw
  /// ``SharedStoreError/serverUnavailable(operation:reason:)`` with the cause — connection refused, no
  /// such socket, a role or database that does not exist, a password the server refuses — and the
  /// store logs it, trying again with a growing backoff (never in a tight loop). (For a configuration
  /// with TLS the cause is not probed: calls wait for the pool as with ``init(client:options:)``.)
  ///
  /// ```swift
  /// let configuration = PostgresClient.Configuration(
  ///   unixSocketPath: "/var/run/postgresql/.s.PGSQL.5432", username: "checkout", password: nil,
  ///   database: "checkout")
  /// let store = PostgresStore(configuration: configuration)
  /// let group = ServiceGroup(services: [store], logger: logger)
  /// ```
  /// - Parameters:
  ///   - configuration: How to connect; the store's client is made from it.
  ///   - options: Retention, the decode-failure policy, the logger and timeouts.
  public init(
    configuration: PostgresClient.Configuration, options: PostgresStoreOptions = PostgresStoreOptions()
  ) {
    let client = PostgresClient(configuration: configuration)
    database = SharedDatabase(
      client: client, options: options, probe: ConnectProbe(configuration: configuration))
    ownedClient = client
  }

  /// The one live value of `key`, starting from its latest version on the server (or `defaultValue` at
  /// version 0).
  ///
  /// Asking again with the same `Value` type returns the same object while it is alive.
  ///
  /// With a local cache (``PostgresStoreOptions/localCachePath``) that holds the key, a server that does
  /// not answer within a few milliseconds (stopped, halted, unreachable) is not waited for: the live value
  /// starts from the cached version, ``SharedLiveData/isStale`` true, and moves to the server's newest
  /// version once the server answers (``run()`` catches it up). Without a cache, or for a key the cache
  /// does not hold, a server that does not answer makes this throw within
  /// ``PostgresStoreOptions/operationTimeout``.
  ///
  /// ```swift
  /// let limits = try await store.liveData("rate-limits", default: RateLimits())
  /// ```
  /// - Parameters:
  ///   - key: Any non-empty string up to 1 MiB of UTF-8, without NUL characters. Keys are compared by
  ///     their bytes on every replica, as PostgreSQL compares them: canonically equivalent spellings
  ///     (`"café"` with U+00E9 and with `e` + U+0301) are two keys.
  ///   - defaultValue: The value while nothing was written.
  /// - Returns: The live value.
  /// - Throws: `PersistentLiveDataError.typeMismatch(key:existing:requested:)`,
  ///   `PersistentLiveDataError.invalidKey(key:reason:)`,
  ///   `PersistentLiveDataError.undecodable(key:version:reason:)` under `DecodeFailurePolicy.throwError`, or
  ///   ``SharedStoreError``.
  public func liveData<Value: Codable & Sendable>(
    _ key: String, default defaultValue: Value
  ) async throws
    -> SharedLiveData<Value>
  {
    try Self.validate(key: key)
    let registry = database.registry
    if let existing = try registry.instance(of: SharedLiveData<Value>.self, for: key, valueType: Value.self) {
      return existing
    }
    let decoding = StoredValueDecoding<Value>(
      key: key, policy: database.options.onUndecodable, logger: database.options.logger,
      events: database.events, instrumentation: database.instrumentation)
    // A notification that arrives before the instance is registered is not lost: it is read again below.
    let noticed = database.changeSignal.generation
    // Nor a write whose notification never came: the periodic catch-up looks from before this read.
    let horizon = database.changeFeed.horizon
    let first = try await firstRead(of: key)
    var history: [StoredRow] = []
    if let latest = first.latest, database.options.onUndecodable == .lastDecodable,
      (try? decoding.decode(latest)) == nil
    {
      history =
        first.isCached
        ? database.cache?.history(key: key) ?? [] : try await database.history(key: key, limit: nil)
    }
    var (value, version) = try decoding.restore(latest: first.latest, default: defaultValue) { history }
    // A removed key starts from its default at the version the removal took: a write continues above.
    if case .server(.removed(let removal)) = first { version = removal }
    let created = SharedLiveData(
      value: value, version: version, defaultValue: defaultValue, database: database, decoding: decoding,
      isStale: first.isCached)
    database.remember(key: key, hash: created.keyHash)
    let live = try registry.register(created, valueType: Value.self)
    database.changeFeed.lower(to: horizon)
    guard live === created else { return live }
    if case .cached(_, let pending?) = first {
      // The server's answer, when it comes, replaces the cached version (never with an older one).
      Task {
        do {
          let effect = try await pending.value.map { live.receive($0, onMainActor: false) }
          live.confirm()
          effect?.notifyObservers()
        } catch {
          // The listener's catch-up confirms the key once the server answers.
        }
      }
    } else if !first.isCached, database.changeSignal.generation != noticed {
      database.receive(try await database.latestState(key: key), of: key).notifyObservers()
    }
    return live
  }

  /// Whether the store's last attempt to reach the server — a call, the listener, a catch-up —
  /// succeeded; false before the first one.
  ///
  /// It changes as calls succeed or fail; the events ``events()`` gives say when:
  /// `StoreEvent.serverUnreachable(reason:)` and `StoreEvent.serverReachable`.
  ///
  /// ```swift
  /// if !store.isServerReachable { banner.show("Settings may be out of date") }
  /// ```
  public var isServerReachable: Bool { database.reachability.isReachable }

  /// How long ``liveData(_:default:)`` waits for the server before it opens a cached key from the cache.
  static let cacheGrace = Duration.milliseconds(20)

  /// Where a new live value starts: the server's newest row of the key, or the cache's (with the
  /// server's read still running, when it did not answer within the grace).
  private enum FirstRead {
    case server(StoredKeyState)
    case cached(StoredRow, pending: Task<StoredRow?, any Error>?)

    var latest: StoredRow? {
      switch self {
      case .server(.row(let row)): row
      case .server: nil
      case .cached(let row, _): row
      }
    }

    var isCached: Bool {
      if case .cached = self { true } else { false }
    }
  }

  /// Reads `key` from the server; with a cache that holds it, from the cache when the server is known
  /// not to answer, or does not answer within ``cacheGrace``.
  private func firstRead(of key: String) async throws -> FirstRead {
    guard let cache = database.cache, let cached = cache.latestRow(key: key) else {
      return .server(try await database.latestState(key: key))
    }
    let reachability = database.reachability
    // The server did not answer a moment ago: no new wait for it (a thousand keys would wait a thousand
    // times); the listener's catch-up confirms the key.
    if reachability.isDoubtful { return .cached(cached, pending: nil) }
    let database = database
    let read = Task { try await database.latestRow(key: key) }
    do {
      return .server(
        try await withDeadline(Self.cacheGrace, operation: "read") { try await read.value }.map { .row($0) }
          ?? .never)
    } catch SharedStoreError.timedOut(let operation, _) where operation == "read" {
      // Not answered in time (the read's own timeout is far longer): it goes on in the background.
      reachability.noteUnanswered()
      return .cached(cached, pending: read)
    } catch SharedStoreError.serverUnavailable {
      return .cached(cached, pending: nil)
    }
  }

  /// Every key written on the server, by any replica, sorted.
  ///
  /// ```swift
  /// for key in try await store.keys() { print(key) }
  /// ```
  /// - Throws: ``SharedStoreError``.
  public func keys() async throws -> [String] {
    try await database.keys()
  }

  /// Writes several values in one transaction: all of them commit, or none.
  ///
  /// `body` runs first, without anything held on the server, and stages writes on the transaction; then
  /// they are committed together, memory moves and observers hear of each (other replicas too). A body
  /// that throws writes nothing.
  ///
  /// ```swift
  /// try await store.transaction { transaction in
  ///   try transaction.set(limits, to: RateLimits(perMinute: 600))
  ///   try transaction.set(flags, to: FeatureFlags(throttling: true))
  /// }
  /// ```
  /// - Parameters:
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - body: Stages writes with ``SharedTransaction/set(_:to:)``.
  /// - Throws: What `body` throws, ``SharedStoreError/foreignValue(key:)`` for a value of another store,
  ///   or as ``SharedLiveData/set(_:isolation:)``; nothing has changed then.
  public func transaction(
    isolation: isolated (any Actor)? = #isolation, _ body: (SharedTransaction) throws -> Void
  ) async throws {
    try await database.instrumentation.measure(.transaction, key: nil) {
      try await transaction(isolation, body)
    }
  }

  /// The body of ``transaction(isolation:_:)``.
  private func transaction(
    _ isolation: isolated (any Actor)?, _ body: (SharedTransaction) throws -> Void
  ) async throws {
    let transaction = SharedTransaction(database: database)
    try body(transaction)
    let staged = transaction.staged
    guard !staged.isEmpty else { return }
    // Every transaction locks heads rows in one order, so two of them never wait for each other.
    let ordered = staged.enumerated().sorted {
      ($0.element.keyHash, $0.offset) < ($1.element.keyHash, $1.offset)
    }.map(\.element)
    guard let committed = try await database.commit(ordered, operation: "transaction") else {
      // A conditional write (SharedTransaction.set(_:to:ifVersion:)) refused: nothing committed.
      throw try await database.conflict(among: ordered)
    }
    let effect = database.applyCommitted(
      ordered, committed: committed, onMainActor: isolation === MainActor.shared)
    effect.notifyObservers()
    database.changeSignal.signal()
  }

  // MARK: Internals

  static func validate(key: String) throws {
    try StoreKey.validate(key)
    if key.utf8.contains(0) {
      throw PersistentLiveDataError.invalidKey(
        key: key, reason: "a key of a shared store cannot contain a NUL character (PostgreSQL text cannot)")
    }
  }
}

/// The writes a ``PostgresStore/transaction(isolation:_:)`` commits together.
///
/// ```swift
/// try await store.transaction { transaction in
///   try transaction.set(flags, to: FeatureFlags(throttling: true))
/// }
/// ```
public final class SharedTransaction {

  let database: SharedDatabase
  /// The writes staged so far, each with the value its writer had (what its live value takes once it has
  /// committed).
  private(set) var staged: [SharedWrite] = []

  init(database: SharedDatabase) {
    self.database = database
  }

  /// Stages `value` as the next version of `data`'s key; it is written when the transaction commits.
  ///
  /// ```swift
  /// try transaction.set(limits, to: RateLimits(perMinute: 600))
  /// ```
  /// - Parameters:
  ///   - data: A live value of the same store.
  ///   - value: The value to write.
  /// - Throws: ``SharedStoreError/foreignValue(key:)``, or
  ///   `PersistentLiveDataError.encodingFailed(key:reason:)` or `.valueTooDeep(key:depth:)` (a value
  ///   nested deeper than the 512 levels `JSONDecoder` reads back).
  public func set<Value>(_ data: SharedLiveData<Value>, to value: Value) throws {
    try stage(value, of: data, ifVersion: nil)
  }

  /// Stages `value` as the next version of `data`'s key, only if the key is still at `expected` when
  /// the transaction commits; otherwise the whole transaction commits nothing and throws
  /// `VersionConflict`.
  ///
  /// ```swift
  /// try await store.transaction { transaction in
  ///   try transaction.set(flags, to: edited, ifVersion: shownVersion)
  ///   try transaction.set(auditLog, to: log + [entry])
  /// }
  /// ```
  /// - Parameters:
  ///   - data: A live value of the same store.
  ///   - value: The value to write.
  ///   - expected: The version the key must still be at (0: never written).
  /// - Throws: As ``set(_:to:)``.
  public func set<Value>(_ data: SharedLiveData<Value>, to value: Value, ifVersion expected: Int64) throws {
    try stage(value, of: data, ifVersion: expected)
  }

  private func stage<Value>(_ value: Value, of data: SharedLiveData<Value>, ifVersion expected: Int64?) throws
  {
    guard data.database === database else { throw SharedStoreError.foreignValue(key: data.key) }
    let payload = String(decoding: try data.decoding.encode(value, key: data.key), as: UTF8.self)
    var write = try data.write(payload, staged: value)
    write.expectedVersion = expected
    write.staged = value
    stage(write)
  }

  /// Stages `write`, which carries the value its live value takes once it has committed.
  func stage(_ write: SharedWrite) {
    staged.append(write)
  }
}
