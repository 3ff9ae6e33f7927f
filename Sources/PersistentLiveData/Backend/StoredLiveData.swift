/// A ``LiveData`` whose versions a store keeps: what every backend's live value does the same way.
///
/// ``PersistentLiveData`` (an SQLite file) and the PostgreSQL backend's `SharedLiveData` are its
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
  /// How rows become values under the store's decode-failure policy.
  package let decoding: StoredValueDecoding<Value>
  /// When the recent versions were committed, for versioned observers: recorded before memory moves to
  /// a version, read from the store for a version that reached memory without its time.
  package let commitTimes: CommitTimes

  package init(value: Value, version: Int64, decoding: StoredValueDecoding<Value>, commitTimes: CommitTimes) {
    key = decoding.key
    self.decoding = decoding
    self.commitTimes = commitTimes
    super.init(value: value, version: version)
  }

  /// Moves to a row written without this instance (another process, another replica, `pld-tool`), if
  /// it is newer and decodes; returns whom to notify.
  package func receive(_ row: StoredRow, onMainActor: Bool) -> CommitEffect {
    guard row.version > version, let value = decoding.received(row) else { return .none }
    commitTimes.record(row.version, milliseconds: row.writtenAtMilliseconds, attribution: row.attribution)
    return advance(to: value, version: row.version, onMainActor: onMainActor)
  }

  /// Moves to the default value at the version a removal of the key took; a backend whose keys cannot
  /// be removed never calls it, and nothing moves.
  package func receiveRemoval(version removal: Int64, onMainActor: Bool) -> CommitEffect { .none }
}

extension StoredLiveData: StoredLiveValue {}
