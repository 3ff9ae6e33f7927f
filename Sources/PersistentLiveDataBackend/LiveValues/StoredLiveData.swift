package import Foundation

/// A ``/PersistentLiveDataCore/LiveData`` whose versions a store keeps: what every backend's live value does
/// the same way.
///
/// `PersistentLiveData` (an SQLite file) and the PostgreSQL backend's `SharedLiveData` are its
/// subclasses; each adds its backend's writes and reads. The base holds the key, the decoding of stored
/// rows under the store's ``DecodeFailurePolicy``, the commit times of recent versions, the move to a
/// version committed without this instance, and the versioned observation
/// (``observeVersioned(owner:receiveCurrent:_:)-(AnyObject,_,_)``). Stores create the instances; an app
/// never subclasses it.
///
/// ```swift
/// func show<Value>(_ data: StoredLiveData<Value>, on screen: Screen) {
///   data.observeVersioned(owner: screen) { screen, change in
///     screen.footer = "\(data.key) v\(change.version), saved \(change.writtenAt)"
///   }
/// }
/// ```
open class StoredLiveData<Value: Codable & Sendable>: LiveData<Value>, @unchecked Sendable {
  // Unchecked because LiveData is (an open class cannot be checked): every property this class adds is
  // an immutable `let` of a Sendable type, and the value itself is LiveData's lock-guarded storage.

  /// The key the value is stored under.
  ///
  /// ```swift
  /// let theme = try store.liveData("theme", default: "light")
  /// theme.key   // "theme"
  /// ```
  public let key: String
  /// The value while the key has no version, and after a removal of the key.
  package let defaultValue: Value
  /// How rows become values under the store's decode-failure policy.
  package let decoding: StoredValueDecoding<Value>
  /// When the recent versions were committed, for versioned observers: recorded before memory moves to
  /// a version, read from the store for a version that reached memory without its time.
  package let commitTimes: CommitTimes
  /// The instance itself while it has observers: a store holds its live values weakly, so a value nobody
  /// else references lives exactly as long as someone observes it (see `observedStateDidChange(_:)`).
  @MainActor private var heldWhileObserved: StoredLiveData?

  package init(
    value: Value, version: Int64, defaultValue: Value, decoding: StoredValueDecoding<Value>,
    commitTimes: CommitTimes
  ) {
    key = decoding.key
    self.defaultValue = defaultValue
    self.decoding = decoding
    self.commitTimes = commitTimes
    super.init(value: value, version: version)
  }

  /// Moves to a row written without this instance (another process, another replica, `pld-tool`), if
  /// it is newer and decodes; returns whom to notify.
  package func receive(_ row: StoredRow, onMainActor: Bool) -> CommitEffect {
    guard row.version > storedVersion, let value = decoding.received(row) else { return .none }
    commitTimes.record(row.version, milliseconds: row.writtenAtMilliseconds, attribution: row.attribution)
    return advance(to: value, version: row.version, onMainActor: onMainActor)
  }

  /// Moves to a version its store committed with the writer's `value` (no decoding): records its commit time
  /// and advances memory; returns whom to notify. The one way a store's own write reaches memory.
  ///
  /// When memory holds that version already — a catch-up or a listener brought it first — a main-actor
  /// writer's observers still hear of it before the write returns, and nobody hears of it twice.
  ///
  /// ```swift
  /// let effect = data.receiveCommitted(newValue, committed, onMainActor: false)
  /// effect.notifyObservers()   // once no lock is held
  /// ```
  package func receiveCommitted(
    _ value: Value, _ committed: CommittedVersion, onMainActor: Bool
  ) -> CommitEffect {
    guard committed.version > storedVersion else { return pendingDelivery(onMainActor: onMainActor) }
    commitTimes.record(
      committed.version, milliseconds: committed.writtenAtMilliseconds, attribution: committed.attribution)
    let effect = advance(to: value, version: committed.version, onMainActor: onMainActor)
    return effect.isEmpty ? pendingDelivery(onMainActor: onMainActor) : effect
  }

  /// ``receiveCommitted(_:_:onMainActor:)`` for a write handed up without its type (see ``CommittedWrite``);
  /// nil when its value is not a `Value`.
  ///
  /// ```swift
  /// let effect = instance.receiveCommitted(write) ?? instance.receive(row, onMainActor: false)
  /// ```
  package func receiveCommitted(_ write: CommittedWrite) -> CommitEffect? {
    guard let value = write.staged as? Value else { return nil }
    return receiveCommitted(value, write.committed, onMainActor: write.onMainActor)
  }

  /// Moves to the default value at the version a removal of the key took, if it is newer than memory.
  /// The removal has no row: its commit time, for versioned observers, is when this instance applies it.
  package func receiveRemoval(version removal: Int64, onMainActor: Bool) -> CommitEffect {
    guard removal > storedVersion else { return .none }
    commitTimes.record(removal, writtenAt: Date())
    return advance(to: defaultValue, version: removal, onMainActor: onMainActor)
  }

  // MARK: Kept alive by its observers

  /// Observed, the value holds itself until its last observer goes: `try store.liveData("k", default:
  /// 0).observe(owner: self) { … }` keeps delivering although nobody keeps the value. Removing the last
  /// observer (or its owner going, or its lifecycle ending) releases it.
  @MainActor package func observedStateDidChange(_ observed: Bool) {
    heldWhileObserved = observed ? self : nil
  }

  /// Observers bound to a plain object are dropped when a delivery finds their owner gone; while nothing
  /// is delivered, ``OwnerSweep`` looks for gone owners, so that the value is released all the same.
  @MainActor package func objectBindingDidChange(_ bound: Bool) {
    if bound {
      OwnerSweep.shared.watch(self)
    } else {
      OwnerSweep.shared.unwatch(self)
    }
  }
}

extension StoredLiveData: SelfHoldingLiveData {}

extension StoredLiveData: OwnerSweep.Swept {
  @MainActor func removeObserversOfGoneOwners() {
    _ = hasObservers  // reading it removes the observers whose owner is gone
  }
}

extension StoredLiveData: StoredLiveValue {}

extension StoredLiveData {
  /// What a rollback to `row` writes: its value, and the bytes to store — the row's own when it was
  /// stored with the schema this build writes (``PersistentValue/writtenSchemaVersion``), the decoded
  /// value encoded in that form otherwise (the old row stays as it is).
  ///
  /// ```swift
  /// let (restored, payload) = try rollbackWrite(of: row)
  /// ```
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` (or another decoding error)
  ///   when the row does not decode, whatever the ``DecodeFailurePolicy``; an encoding error.
  package func rollbackWrite(of row: StoredRow) throws -> (value: Value, payload: Data) {
    let restored = try decoding.decode(row)
    let payload =
      row.schemaVersion == decoding.writtenSchemaVersion
      ? row.payload : try decoding.encode(restored, key: key)
    return (restored, payload)
  }

  /// The kept `rows` (newest first) as a history, under the store's ``DecodeFailurePolicy``: under
  /// ``DecodeFailurePolicy/throwError`` the first row that does not decode throws its error, naming key
  /// and version; under a lenient policy it is left out, with a warning to the logger and a
  /// ``StoreEvent/versionLeftOutOfHistory(key:version:error:)``. No version is ever left out silently.
  ///
  /// ```swift
  /// try historyVersions(database.history(key: key, limit: limit))
  /// ```
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)`` under
  ///   ``DecodeFailurePolicy/throwError``.
  package func historyVersions(_ rows: [StoredRow]) throws -> [Versioned<Value>] {
    try rows.compactMap { row in
      try decoding.historyValue(row).map { value in
        Versioned(version: row.version, value: value, writtenAt: row.writtenAt, attribution: row.attribution)
      }
    }
  }
}
