/// A live value of a store, as the store sees it: something it can move to a version committed without
/// it.
///
/// This is half of the seam between the observation side and a storage backend. A backend (the SQLite
/// store, a shared store on a server) learns of versions written elsewhere — another process, another
/// replica, `pld-tool` — and hands each one, as a ``StoredRow``, to the live instance of its key. The
/// instance decodes it (user code: never under a store lock) and moves its memory forward with
/// ``/PersistentLiveDataCore/LiveData/advance(to:version:onMainActor:)``.
///
/// ```swift
/// for row in changedRows {
///   registry.instance(for: row.key)?.receive(row, onMainActor: false).notifyObservers()
/// }
/// ```
package protocol StoredLiveValue: AnyObject, Sendable {
  /// The key the value is stored under.
  var key: String { get }
  /// The version in memory: a backend asks the store for rows only when it knows of a newer one. (Not
  /// the public `version`, whose read marks the value as watched by someone.)
  var storedVersion: Int64 { get }
  /// Moves to `row` if it is newer than memory and decodes; returns whom to notify. A row that does not
  /// decode changes nothing (it stays on disk, untouched).
  func receive(_ row: StoredRow, onMainActor: Bool) -> CommitEffect
  /// Moves to the default value at `version` — the version a removal of the key took — if it is newer
  /// than memory; returns whom to notify.
  func receiveRemoval(version: Int64, onMainActor: Bool) -> CommitEffect
  /// Moves to a version its store committed, taking the writer's value as it is when it has this instance's
  /// type; returns whom to notify, or nil when the write carries no such value (the store then decodes the
  /// row with ``receive(_:onMainActor:)``, outside any lock).
  func receiveCommitted(_ write: CommittedWrite) -> CommitEffect?
}
