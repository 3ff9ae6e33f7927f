/// A version a store committed for one key, with the value its writer had: what the store hands up to
/// the key's live value so that memory and observers move with the commit.
///
/// The one way a store's own write reaches memory — the SQLite writer's apply phase (under its lock,
/// right after the commit), the shared store's `set`, its conditional writes and its transactions — is
/// ``StoredLiveData/receiveCommitted(_:)`` (or its typed form, for the writing instance itself). The
/// writer hands this value up; nothing of the layer above is called by the layer below but through it.
///
/// ```swift
/// let write = CommittedWrite(committed: committed, staged: newValue, onMainActor: false)
/// let effect = instances.instance(for: committed.key)?.receiveCommitted(write)   // nil: decode the row
/// ```
package struct CommittedWrite: Sendable {
  /// The version committed: key, number, time, value schema version and attribution.
  package let committed: CommittedVersion
  /// The value as the writer had it; nil for raw JSON (`pld-tool`), which the key's live value decodes.
  package let staged: (any Sendable)?
  /// Whether the writer runs on the main actor: its main-actor observers are then called before the
  /// write returns.
  package let onMainActor: Bool

  package init(committed: CommittedVersion, staged: (any Sendable)?, onMainActor: Bool) {
    self.committed = committed
    self.staged = staged
    self.onMainActor = onMainActor
  }
}
