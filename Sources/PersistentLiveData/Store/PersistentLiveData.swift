import Foundation
import Logging

/// A ``/PersistentLiveDataCore/LiveData`` whose every write is a new version in an SQLite file.
///
/// Get one from ``PersistentStore/liveData(_:default:)``. It starts with the latest stored version of its
/// key (or the default at version 0), and each successful ``set(_:isolation:)`` commits one transaction,
/// then updates ``/PersistentLiveDataCore/LiveData/value`` and ``/PersistentLiveDataCore/LiveData/version``
/// and notifies observers under the usual delivery rules. A `set` that throws changes nothing, in memory or
/// on disk.
///
/// ```swift
/// struct Settings: Codable, Sendable { var theme = "light"; var fontSize = 14 }
///
/// let store = try PersistentStore(path: "/var/lib/myapp/state.db")
/// let settings = try store.liveData("settings", default: Settings())
/// settings.observe(owner: screen) { apply($0) }
/// try settings.update { $0.fontSize += 1 }      // version 1, 2, 3 …
/// let previous = try settings.history(limit: 2)
/// ```
public final class PersistentLiveData<Value: Codable & Sendable>: StoredLiveData<Value>, @unchecked Sendable {
  // Unchecked because LiveData is (an open class cannot be checked): every property this class adds is
  // an immutable `let` of a Sendable type, and the value itself is LiveData's lock-guarded storage.

  let database: StoreDatabase

  init(
    value: Value, version: Int64, defaultValue: Value, database: StoreDatabase,
    decoding: StoredValueDecoding<Value>
  ) {
    self.database = database
    // Commit times are read from the file for the version this instance was restored at.
    let commitTimes = CommitTimes(
      source: .immediate { [database, key = decoding.key] version in
        (try? database.row(key: key, version: version)).flatMap { $0.map { ($0.writtenAt, $0.attribution) } }
      })
    super.init(
      value: value, version: version, defaultValue: defaultValue, decoding: decoding, commitTimes: commitTimes
    )
  }

  /// Writes `newValue` as the next version.
  ///
  /// The value is encoded first, then committed in one transaction; only then do
  /// ``/PersistentLiveDataCore/LiveData/value`` and ``/PersistentLiveDataCore/LiveData/version`` change and
  /// observers hear of it — synchronously on the main actor, scheduled otherwise. Inside
  /// ``PersistentStore/transaction(isolation:_:)`` the change becomes visible when the transaction commits.
  ///
  /// ```swift
  /// try theme.set("dark")
  /// theme.version   // one more than before
  /// ```
  /// - Parameters:
  ///   - newValue: The value to store.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// The version records the ``/PersistentLiveDataBackend/WriteAttribution/current`` in effect here (every
  /// write does).
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError`` (encoding failure, disk full,
  ///   read-only, busy, closed store…), or ``/PersistentLiveDataBackend/WriteAttributionTooLong`` for an
  ///   attribution over its limits; nothing has changed then.
  public func set(_ newValue: Value, isolation: isolated (any Actor)? = #isolation) throws {
    try database.instrumentation.measure(.set, key: key) {
      let payload = try decoding.encode(newValue, key: key)
      try write(newValue, payload: payload, expectedVersion: nil, isolation: isolation)
    }
  }

  /// Atomically reads, transforms and writes the value as the next version.
  ///
  /// The transform runs without any lock held on a copy of the latest value. If another write (from this
  /// or another process) commits in between, it runs again on the newer value, so it must not have side
  /// effects. A transform that throws changes nothing.
  ///
  /// ```swift
  /// let launches = try store.liveData("launches", default: 0)
  /// try launches.update { $0 += 1 }
  /// ```
  /// - Parameters:
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - transform: Mutates the value in place.
  /// - Returns: The value written.
  /// - Throws: What `transform` throws, or a ``/PersistentLiveDataBackend/PersistentLiveDataError``; nothing
  ///   has changed then.
  @discardableResult
  public func update(
    isolation: isolated (any Actor)? = #isolation, _ transform: (inout Value) throws -> Void
  ) throws -> Value {
    try database.instrumentation.measure(.update, key: key) {
      try updateRetrying(isolation: isolation, transform)
    }
  }

  /// The body of ``update(isolation:_:)``: the transform, run again after every conflict.
  private func updateRetrying(
    isolation: isolated (any Actor)?, _ transform: (inout Value) throws -> Void
  ) throws -> Value {
    try database.ensureWritable()  // before the transform runs
    _ = try WriteAttribution.validatedCurrent()  // so is an attribution over its limit
    while true {
      let base = currentBase()
      var candidate = base.value
      try transform(&candidate)
      let payload = try decoding.encode(candidate, key: key)
      do {
        try write(candidate, payload: payload, expectedVersion: base.version, isolation: isolation)
        return candidate
      } catch let stale as StaleWrite {
        database.instrumentation.countRetry()
        try reload(expecting: stale.latestVersion, isolation: isolation)
      }
    }
  }

  /// The versions of this key still kept, newest first.
  ///
  /// Versions stored with an older ``/PersistentLiveDataBackend/PersistentValue/schemaVersion`` are upgraded
  /// in memory; nothing is written. A version is never left out silently:
  ///
  /// - One that does not decode (or was written by a newer schema of the type) makes the history throw its
  ///   error, naming the key and the version, under the default
  ///   ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError``. Under
  ///   ``/PersistentLiveDataBackend/DecodeFailurePolicy/useDefault`` or
  ///   ``/PersistentLiveDataBackend/DecodeFailurePolicy/lastDecodable`` it is left out, so that one bad
  ///   version does not hide the others, and reported: a
  ///   ``/PersistentLiveDataBackend/StoreEvent/versionLeftOutOfHistory(key:version:error:)`` on
  ///   ``PersistentStore/events()`` and a warning to the store's logger, if it has one.
  /// - A version on a damaged page of the file makes the history throw
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` whatever the policy (the
  ///   detail names the key, the last version read and the SQLite code), and a
  ///   ``/PersistentLiveDataBackend/StoreEvent/damagedPage(path:key:version:error:)`` is reported.
  ///
  /// To see every version with its outcome, the value or why it cannot be read, use
  /// ``historyEntries(limit:)``.
  ///
  /// ```swift
  /// for entry in try settings.history(limit: 10) {
  ///   print("v\(entry.version) at \(entry.writtenAt): \(entry.value)")
  /// }
  /// ```
  /// - Parameter limit: The most stored versions to read, newest first (those that do not decode count
  ///   too); nil for all that are kept.
  /// - Returns: The versions, newest first; empty if nothing was written yet. Under a lenient policy,
  ///   without those that do not decode (each one reported).
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``
  ///   under ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError``;
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` for a damaged page;
  ///   another storage error.
  public func history(limit: Int? = nil) throws -> [Versioned<Value>] {
    try historyVersions(database.history(key: key, limit: limit))
  }

  /// The value stored as `version`, upgraded in memory if it was stored with an older
  /// ``/PersistentLiveDataBackend/PersistentValue/schemaVersion``.
  ///
  /// ```swift
  /// if let before = try settings.value(at: settings.version - 1) { print(before) }
  /// ```
  /// - Parameter version: A version number.
  /// - Returns: The value, or nil if that version was never written or has been pruned.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``
  ///   when that version does not decode (``historyEntry(at:)`` reports it without throwing), or a storage
  ///   error.
  public func value(at version: Int64) throws -> Value? {
    guard let row = try database.row(key: key, version: version) else { return nil }
    return try decoding.decode(row)
  }

  /// Writes a new version holding the content of an earlier one.
  ///
  /// History is never rewritten: rolling back to version 3 of a key at version 7 writes version 8 with
  /// the content of version 3.
  ///
  /// ```swift
  /// try settings.rollback(to: 3)
  /// ```
  /// - Parameters:
  ///   - version: A kept version of this key.
  ///   - isolation: The caller's isolation, filled in by the compiler; decides whether observers are
  ///     called before this returns (main actor) or scheduled.
  /// A version stored with another schema version is decoded (an older one upgraded), and the new version
  /// holds that content, written with ``/PersistentLiveDataBackend/PersistentValue/writtenSchemaVersion``;
  /// the old row stays as it is.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/unknownVersion(key:version:)`` if it was
  ///   never written or has been pruned;
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``
  ///   if it does not decode, whatever the ``/PersistentLiveDataBackend/DecodeFailurePolicy``; otherwise as
  ///   ``set(_:isolation:)``. Nothing has changed then.
  public func rollback(to version: Int64, isolation: isolated (any Actor)? = #isolation) throws {
    try database.instrumentation.measure(.rollback, key: key) { try rollback(to: version, isolation) }
  }

  /// The body of ``rollback(to:isolation:)``.
  private func rollback(to version: Int64, _ isolation: isolated (any Actor)?) throws {
    guard let row = try database.row(key: key, version: version) else {
      throw PersistentLiveDataError.unknownVersion(key: key, version: version)
    }
    let (restored, payload) = try rollbackWrite(of: row)
    try write(restored, payload: payload, expectedVersion: nil, isolation: isolation)
  }

  /// Writes the default value given to ``PersistentStore/liveData(_:default:)`` as a new version.
  ///
  /// Like every write, it keeps the history: the versions before it stay, and
  /// ``rollback(to:isolation:)`` undoes the reset. Observers hear of it like any other version.
  ///
  /// ```swift
  /// let theme = try store.liveData("theme", default: "light")
  /// try theme.set("dark")     // version 1
  /// try theme.reset()         // version 2: "light"
  /// try theme.rollback(to: 1) // version 3: "dark" again
  /// ```
  /// - Parameter isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: As ``set(_:isolation:)``; nothing has changed then.
  public func reset(isolation: isolated (any Actor)? = #isolation) throws {
    try database.instrumentation.measure(.reset, key: key) {
      let payload = try decoding.encode(defaultValue, key: key)
      try write(defaultValue, payload: payload, expectedVersion: nil, isolation: isolation)
    }
  }

  // MARK: Internals

  /// The value and version a read-modify-write starts from: what this thread's running transaction wrote
  /// last, or the committed state.
  private func currentBase() -> (value: Value, version: Int64) {
    if let staged = database.stagedValue(for: key), let value = staged.value as? Value {
      return (value, staged.version)
    }
    return snapshot
  }

  /// Commits an encoded value; memory moves with the commit (see ``PendingWrite``).
  func write(
    _ newValue: Value, payload: Data, expectedVersion: Int64?, isolation: isolated (any Actor)?
  ) throws {
    let write = try pendingWrite(
      newValue, payload: payload, expectedVersion: expectedVersion,
      onMainActor: isolation === MainActor.shared)
    try database.commit(write)
  }

  /// The prepare phase of a write of `newValue`, already encoded as `payload`: the ``PendingWrite`` the store
  /// commits, whose apply phase hands `newValue` to this instance's `receiveCommitted` (which records the
  /// commit time and moves memory). Reads the caller's
  /// ``/PersistentLiveDataBackend/WriteAttribution/current``; takes no lock.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/WriteAttributionTooLong`` when the attribution in effect is over
  ///   a limit.
  func pendingWrite(
    _ newValue: Value, payload: Data, expectedVersion: Int64?, onMainActor: Bool
  ) throws -> PendingWrite {
    var write = try PendingWrite(
      key: key, payload: payload, schemaVersion: decoding.writtenSchemaVersion,
      expectedVersion: expectedVersion, staged: newValue)
    write.notifiesOnMainActor = onMainActor
    return write
  }

  /// Loads the newest stored version after an optimistic write lost to another connection's, applying
  /// the store's decode-failure policy.
  private func reload(expecting latestVersion: Int64, isolation: isolated (any Actor)?) throws {
    let onMainActor = isolation === MainActor.shared
    guard let row = try database.row(key: key, version: latestVersion) else {
      // The newest version has no row only when it is the version a removal of the key took.
      receiveRemoval(version: latestVersion, onMainActor: onMainActor).notifyObservers()
      return
    }
    let value = try decoding.reload(row, current: snapshot.value)
    commitTimes.record(row.version, writtenAt: row.writtenAt, attribution: row.attribution)
    advance(to: value, version: row.version, onMainActor: onMainActor).notifyObservers()
  }

}
