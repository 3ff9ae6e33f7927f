import Foundation
import Logging
public import PersistentLiveDataBackend

/// A `LiveData` whose versions are kept on a PostgreSQL server that several replicas share.
///
/// Get one from ``PostgresStore/liveData(_:default:)``. Its rules are those of an SQLite store's
/// `PersistentLiveData`, across machines: versions of a key are 1, 2, 3 … with no gap whichever replica
/// writes; ``set(_:isolation:)`` returns after the commit, then memory changes and observers hear of it;
/// other replicas' writes arrive while ``PostgresStore/run()`` runs, coalesced for observers, every one of
/// them through ``changes(since:)``.
///
/// ```swift
/// let flags = try await store.liveData("feature-flags", default: FeatureFlags())
/// flags.observeForever { apply($0) }
/// try await flags.update { $0.newCheckout = true }   // atomic across replicas
/// ```
public final class SharedLiveData<Value: Codable & Sendable>: StoredLiveData<Value>, @unchecked Sendable {
  // Unchecked because LiveData is (an open class cannot be checked): every property this class adds is
  // an immutable `let` of a Sendable type, and the value itself is LiveData's lock-guarded storage.

  let keyHash: String
  let database: SharedDatabase
  /// Whether the value came from the local cache and the server has not confirmed the key since.
  private let staleness: Locked<Bool>

  init(
    value: Value, version: Int64, defaultValue: Value, database: SharedDatabase,
    decoding: StoredValueDecoding<Value>, isStale: Bool = false
  ) {
    keyHash = KeyHash.of(decoding.key)
    self.database = database
    staleness = Locked(isStale)
    // Commit times are fetched from the server for a version that reached memory without its time.
    let commitTimes = CommitTimes(
      source: .fetched { [database, key = decoding.key] version in
        try await database.row(key: key, version: version).map { ($0.writtenAt, $0.attribution) }
      })
    super.init(
      value: value, version: version, defaultValue: defaultValue, decoding: decoding, commitTimes: commitTimes
    )
  }

  /// Writes `newValue` as the key's next version on the server.
  ///
  /// Returns after the commit; by then `LiveData.value` and `LiveData.version` have changed and
  /// observers were called (on the main actor) or scheduled (elsewhere). Other replicas hear of it through
  /// the notification sent right after the commit, which this call does not wait for (nor fails with);
  /// one that is lost is made up for by their periodic catch-up.
  ///
  /// ```swift
  /// try await flags.set(FeatureFlags(newCheckout: true))
  /// ```
  /// - Parameters:
  ///   - newValue: The value to store.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: ``SharedStoreError`` (server unavailable, timed out, refused), or
  ///   `PersistentLiveDataError.encodingFailed(key:reason:)` or `.valueTooDeep(key:depth:)` (a value
  ///   nested deeper than the 512 levels `JSONDecoder` reads back), or `WriteAttributionTooLong` for a
  ///   `WriteAttribution.current` over its limits (every write records the one in effect where it is
  ///   called), thrown before anything reaches the server; memory has not changed then.
  public func set(_ newValue: Value, isolation: isolated (any Actor)? = #isolation) async throws {
    try await database.instrumentation.measure(.set, key: key) { try await set(newValue, isolation) }
  }

  /// The body of ``set(_:isolation:)``.
  private func set(_ newValue: Value, _ isolation: isolated (any Actor)?) async throws {
    let payload = try encode(newValue)
    let write = try write(payload, staged: newValue)
    guard let committed = try await database.commit([write], operation: "set")?.first else { return }
    apply(newValue, write: write, committed: committed, onMainActor: isolation === MainActor.shared)
  }

  /// Reads, transforms and writes the value as the next version — atomically across replicas.
  ///
  /// The transform runs without anything held on the server, on the latest value this replica knows. The
  /// write commits only if no other write came in between; otherwise the newest value is read and the
  /// transform runs again. So no update is lost, and the transform must not have side effects.
  ///
  /// ```swift
  /// let visits = try await store.liveData("visits", default: 0)
  /// try await visits.update { $0 += 1 }
  /// ```
  /// - Parameters:
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - transform: Mutates the value in place.
  /// - Returns: The value written.
  /// - Throws: What `transform` throws, ``SharedStoreError``, or `PersistentLiveDataError`; nothing has
  ///   changed then.
  @discardableResult
  public func update(
    isolation: isolated (any Actor)? = #isolation,
    _ transform: @escaping @Sendable (inout Value) throws -> Void
  ) async throws -> Value {
    try await database.instrumentation.measure(.update, key: key) { try await update(isolation, transform) }
  }

  /// The body of ``update(isolation:_:)``: the transform, run again after every conflict.
  private func update(
    _ isolation: isolated (any Actor)?, _ transform: @escaping @Sendable (inout Value) throws -> Void
  ) async throws -> Value {
    let onMainActor = isolation === MainActor.shared
    _ = try WriteAttribution.validatedCurrent()  // an attribution over its limit throws before the transform
    while true {
      let base = snapshot
      var candidate = base.value
      try transform(&candidate)
      var write = try write(try encode(candidate), staged: candidate)
      write.expectedVersion = base.version
      if let committed = try await database.commit([write], operation: "update")?.first {
        apply(candidate, write: write, committed: committed, onMainActor: onMainActor)
        return candidate
      }
      // Another write came first: continue from the newest version (as the decode policy allows).
      database.instrumentation.countRetry()
      let row: StoredRow
      switch try await database.latestState(key: key) {
      case .row(let newest): row = newest
      case .removed(let version):
        // Removed meanwhile: the update goes on from the default, above the removal's version.
        database.receive(.removed(version: version), of: key, onMainActor: onMainActor).notifyObservers()
        continue
      case .never: continue
      }
      let newest = try decoding.reload(row, current: value)
      commitTimes.record(row.version, milliseconds: row.writtenAtMilliseconds, attribution: row.attribution)
      let effect = advance(to: newest, version: row.version, onMainActor: onMainActor)
      confirm()
      effect.notifyObservers()
    }
  }

  /// The versions of this key still kept on the server that decode, newest first.
  ///
  /// ```swift
  /// for entry in try await flags.history(limit: 5) { print(entry.version, entry.value) }
  /// ```
  /// A version that does not decode is never left out silently: under the default
  /// `DecodeFailurePolicy.throwError` its error is thrown, naming key and version; under a lenient policy
  /// it is left out and reported (`StoreEvent.versionLeftOutOfHistory`, and the logger).
  ///
  /// - Parameter limit: The most versions to read, newest first; nil for all that are kept.
  /// - Returns: The versions, newest first.
  /// - Throws: ``SharedStoreError``, or `PersistentLiveDataError.undecodable(key:version:reason:)` (or
  ///   `.valueSchemaTooNew`) under `.throwError`.
  public func history(limit: Int? = nil) async throws -> [Versioned<Value>] {
    try historyVersions(try await database.history(key: key, limit: limit))
  }

  /// The value stored as `version`.
  ///
  /// ```swift
  /// let before = try await flags.value(at: flags.version - 1)
  /// ```
  /// - Parameter version: A version number.
  /// - Returns: The value, or nil if that version was never written or has been pruned.
  /// - Throws: `PersistentLiveDataError.undecodable(key:version:reason:)` when it does not decode, or
  ///   ``SharedStoreError``.
  public func value(at version: Int64) async throws -> Value? {
    guard let row = try await database.row(key: key, version: version) else { return nil }
    return try decoding.decode(row)
  }

  /// Writes a new version holding the content of an earlier one; history is never rewritten.
  ///
  /// ```swift
  /// try await flags.rollback(to: 3)   // version N+1 holds what version 3 held
  /// ```
  /// - Parameters:
  ///   - version: A kept version of this key.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: `PersistentLiveDataError.unknownVersion(key:version:)` if it was never written or was
  ///   pruned, `PersistentLiveDataError.undecodable(key:version:reason:)` if it does not decode, or as
  ///   ``set(_:isolation:)``; nothing has changed then.
  public func rollback(to version: Int64, isolation: isolated (any Actor)? = #isolation) async throws {
    try await database.instrumentation.measure(.rollback, key: key) {
      try await rollback(to: version, isolation)
    }
  }

  /// The body of ``rollback(to:isolation:)``.
  private func rollback(to version: Int64, _ isolation: isolated (any Actor)?) async throws {
    guard let row = try await database.row(key: key, version: version) else {
      throw PersistentLiveDataError.unknownVersion(key: key, version: version)
    }
    let (restored, payload) = try rollbackWrite(of: row)
    let write = try write(String(decoding: payload, as: UTF8.self), staged: restored)
    guard let committed = try await database.commit([write], operation: "rollback")?.first else { return }
    apply(restored, write: write, committed: committed, onMainActor: isolation === MainActor.shared)
  }

  /// Every version after `version`, oldest first, from any replica, each exactly once and with no gap.
  ///
  /// First those already stored, then each one committed later — by this replica, or by another while
  /// ``PostgresStore/run()`` runs. A read that fails because the server is unavailable is retried until
  /// it is back, so a server restart loses nothing. Ends when the consuming task is cancelled.
  ///
  /// ```swift
  /// for try await change in flags.changes(since: lastAudited) {
  ///   try await audit.record(change.version, change.value)
  /// }
  /// ```
  /// It throws `PersistentLiveDataError.changesPruned(key:since:oldestKept:)` when versions it still
  /// had to deliver were pruned by retention, `PersistentLiveDataError.unknownVersion(key:version:)` at
  /// once when `version` is newer than the key's newest version on the server, and
  /// `PersistentLiveDataError.undecodable(key:version:reason:)` for a version this type cannot decode.
  ///
  /// - Parameter version: The last version already handled; 0 replays every version still kept (from
  ///   the oldest one retention left, without an error for those before it).
  /// - Returns: The versions after `version`, in order, without end.
  public func changes(since version: Int64) -> AsyncThrowingStream<Versioned<Value>, any Error> {
    let database = database
    let key = key
    let reader = ChangeReader(
      decoding: decoding, after: version, signal: database.changeSignal,
      newestVersion: {
        // Retention never deletes a key's newest row.
        let latest = try await database.retryingWhileUnavailable { try await database.latestRow(key: key) }
        // nil: the consuming task was cancelled, and the stream ends at its first read.
        return latest.map { $0?.version ?? 0 } ?? .max
      }
    ) { after, limit in
      try await database.retryingWhileUnavailable {
        try await database.rows(key: key, after: after, limit: limit)
      }
    }
    // The stream holds the live value while it is consumed (as `values` does).
    return AsyncThrowingStream(unfolding: { [self] in
      _ = self
      return try await reader.next()
    })
  }

  /// True while `value` came from the local cache and the server has not confirmed this key since.
  ///
  /// Only a store with a local cache (``PostgresStoreOptions/localCachePath``) makes stale values: when
  /// ``PostgresStore/liveData(_:default:)`` found the server away and started from the cached version.
  /// It turns false when the server answers for the key — the first read, the listener's catch-up
  /// (within ``PostgresStoreOptions/catchUpInterval`` of the server's return while
  /// ``PostgresStore/run()`` runs), or a write that commits.
  ///
  /// ```swift
  /// let flags = try await store.liveData("feature-flags", default: FeatureFlags())
  /// if flags.isStale { logger.notice("feature flags from the local cache, v\(flags.version)") }
  /// ```
  public var isStale: Bool { staleness.withLock { $0 } }

  // MARK: Internals

  /// The server answered for this key: the value is no longer stale.
  func confirm() {
    staleness.withLock { $0 = false }
  }

  private func encode(_ value: Value) throws -> String {
    String(decoding: try decoding.encode(value, key: key), as: UTF8.self)
  }

  /// A write of `payload`, recording the ``/PersistentLiveDataBackend/WriteAttribution/current`` of the
  /// caller.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/WriteAttributionTooLong`` when it is over a limit; nothing is
  ///   written then.
  func write(_ payload: String, staged: Value) throws -> SharedWrite {
    var write = SharedWrite(
      key: key, keyHash: keyHash, payload: payload, schemaVersion: decoding.writtenSchemaVersion)
    write.attribution = try WriteAttribution.validatedCurrent()
    // Only a live collection takes the typed value (without one, nothing is boxed on the write path; a
    // collection opened meanwhile decodes the row instead).
    if !database.collections.isEmpty { write.staged = staged }
    return write
  }

  /// Moves memory (and the live collections that hold the key) to a version this replica committed,
  /// notifies, and wakes `changes(since:)` readers.
  func apply(_ newValue: Value, write: SharedWrite, committed: CommittedVersion, onMainActor: Bool) {
    var effect = receiveCommitted(newValue, committed, onMainActor: onMainActor)
    confirm()
    effect.merge(database.collectionEffect(of: [write], committed: [committed], onMainActor: onMainActor))
    effect.notifyObservers()
    database.changeSignal.signal()
  }
}

/// A live value that may have started from the local cache: what the listener confirms after reading
/// the server (the listener sees live values as `StoredLiveValue`s of any type).
protocol SharedStaleness: AnyObject {
  var isStale: Bool { get }
  func confirm()
}

extension SharedLiveData: SharedStaleness {}
