internal import Foundation

/// One version to write, prepared by the caller before any lock is taken.
///
/// The write pipeline of a store has four named phases:
/// 1. **prepare** — the caller encodes the value (user code) into a `PendingWrite`, holding no lock;
/// 2. **commit** — under the store's lock, the next version is inserted (and old ones pruned) in one
///   transaction, or in the running ``PersistentStore/transaction(isolation:_:)``;
/// 3. **apply** — still under the lock, right after the commit: the store hands the key's live value a
///   `CommittedWrite` (the version and the writer's ``staged`` value), and
///   `StoredLiveData.receiveCommitted(_:)` moves memory (in commit order, so it never goes backwards) and
///   returns a ``CommitEffect``;
/// 4. **notify** — the lock is released, then ``CommitEffect/notifyObservers()`` runs.
///
/// A write that has no value of the live value's type (``staged`` is nil: raw JSON from `pld-tool`; or a
/// collection member's of another type) is decoded by the key's live instance, if any, in the notify phase —
/// never under the lock.
///
/// ```swift
/// let payload = try ValueCodec.encode(newValue, key: key)                       // prepare
/// let write = try PendingWrite(key: key, payload: payload, schemaVersion: 1, staged: newValue)
/// try database.commit(write)                                                    // commit … notify
/// ```
struct PendingWrite: Sendable {
  let key: String
  /// The JSON text to store.
  let payload: Data
  /// The schema version to record with the payload
  /// (``/PersistentLiveDataBackend/PersistentValue/schemaVersion``, or 1); nil for raw JSON written without a
  /// type (`pld-tool`): then the schema version of the key's newest version, read in the write transaction (1
  /// for a new key).
  var schemaVersion: Int?
  /// When set, the write happens only if the key is still at this version (an optimistic `update`, a
  /// conditional `set(_:ifVersion:)`; 0: the key has no version — never written, or removed);
  /// otherwise ``StaleWrite`` is thrown and nothing is written.
  var expectedVersion: Int64?
  /// The typed value: what the key's live value takes in the apply phase (no decoding), and what a later
  /// `update` of the same key inside the same transaction starts from.
  var staged: (any Sendable)?
  /// For a faithful restore (`pld-tool import` of an export): the version number and time to store
  /// instead of the next number and now. The version must be above the key's newest, or
  /// ``StaleWrite`` is thrown and nothing is written.
  var restoring: (version: Int64, writtenAt: Date)?
  /// Who writes it, and why: ``/PersistentLiveDataBackend/WriteAttribution/current`` where the write was
  /// called, checked against its limits (``/PersistentLiveDataBackend/WriteAttribution/validatedCurrent()``)
  /// before anything is written; or, for a faithful restore, the exported version's.
  var attribution: WriteAttribution?
  /// Whether the writer runs on the main actor: the live collections that hold the key then call their
  /// observers before the write returns, as a live value does for its own writes.
  var notifiesOnMainActor = false

  /// - Throws: ``/PersistentLiveDataBackend/WriteAttributionTooLong`` when the attribution in effect is over
  ///   a limit.
  init(
    key: String, payload: Data, schemaVersion: Int?, expectedVersion: Int64? = nil,
    staged: (any Sendable)? = nil
  ) throws {
    attribution = try WriteAttribution.validatedCurrent()
    self.key = key
    self.payload = payload
    self.schemaVersion = schemaVersion
    self.expectedVersion = expectedVersion
    self.staged = staged
  }
}

/// What the commit phase hands to the notify phase: the observers to notify, and the raw rows the live
/// instances must still decode.
struct CommitOutcome {
  var effect = CommitEffect.none
  var undecodedRows: [StoredRow] = []
  /// Every write committed, for the live collections whose members they are: collected only while the
  /// store has a live collection.
  var members: [MemberChange] = []
  /// Whether a write of ``members`` was made on the main actor (then so is the notify phase).
  var membersOnMainActor = false

  mutating func merge(_ other: CommitOutcome) {
    effect.merge(other.effect)
    if undecodedRows.isEmpty {
      undecodedRows = other.undecodedRows
    } else {
      undecodedRows += other.undecodedRows
    }
    if members.isEmpty { members = other.members } else { members += other.members }
    membersOnMainActor = membersOnMainActor || other.membersOnMainActor
  }
}

/// A conditional write (``PendingWrite/expectedVersion``, ``PendingWrite/restoring``) found its key at
/// another version: nothing was written. The public face of it is
/// ``/PersistentLiveDataBackend/VersionConflict``.
struct StaleWrite: Error {
  /// The key's newest version: of its newest row, or the one its removal took (0: never written).
  let latestVersion: Int64
  /// The version the key holds: `latestVersion`, or 0 when it has no row (never written, or removed).
  let currentVersion: Int64
}
