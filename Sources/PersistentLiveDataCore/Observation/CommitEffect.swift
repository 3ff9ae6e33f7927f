/// What a commit still owes observers once the store's lock is released.
///
/// Every store write follows one rule: **memory moves with the commit; observers run after the lock is
/// released.** While the lock is held, each committed version is applied to its ``LiveData`` (value,
/// version, async sequences: cheap, and no user code), and what that application still has to do — a
/// synchronous dispatch on the main actor, or a scheduled one — is collected here. The writer releases the
/// lock, then calls ``notifyObservers()``. A transaction merges the effects of its writes and notifies
/// once, after its commit.
///
/// ```swift
/// let effect = try connection.sync { _, _ in
///   // BEGIN … INSERT … COMMIT, then:
///   data.advance(to: newValue, version: committedVersion, onMainActor: onMainActor)
/// }
/// effect.notifyObservers()   // no lock held: observers may call back into the store
/// ```
package struct CommitEffect: Sendable {
  /// One LiveData whose observers have to hear of a committed version.
  private struct Delivery: Sendable {
    let target: any CommitNotifying
    let onMainActor: Bool
    let mustSchedule: Bool
  }

  private var deliveries: [Delivery] = []

  /// An effect that notifies nobody: the version was already in memory, or there is no live value.
  package static var none: CommitEffect { CommitEffect() }

  private init() {}

  init(target: any CommitNotifying, onMainActor: Bool, mustSchedule: Bool) {
    deliveries = [Delivery(target: target, onMainActor: onMainActor, mustSchedule: mustSchedule)]
  }

  /// Whether there is nobody to notify.
  package var isEmpty: Bool { deliveries.isEmpty }

  /// Appends `other`'s notifications after this effect's, keeping commit order.
  package mutating func merge(_ other: CommitEffect) {
    // The common case, one write's effect into an empty one: take its array (no new buffer, no copy).
    if deliveries.isEmpty {
      deliveries = other.deliveries
    } else {
      deliveries.append(contentsOf: other.deliveries)
    }
  }

  /// Notifies, in commit order: synchronously when the write was made on the main actor, otherwise
  /// through the one main-actor dispatch its LiveData scheduled (coalescing to the latest). The scheduled
  /// dispatches of one effect — a transaction's or a group commit's, several LiveData — run in one
  /// main-actor job, so that a commit wakes the main actor once, not once per key. Call it with no store
  /// lock held.
  package func notifyObservers() {
    var scheduled: [WeakCommitTarget] = []
    for delivery in deliveries {
      if !delivery.onMainActor && delivery.mustSchedule && deliveries.count > 1 {
        scheduled.append(WeakCommitTarget(target: delivery.target))
      } else {
        delivery.target.notifyAfterWrite(
          onMainActor: delivery.onMainActor, mustSchedule: delivery.mustSchedule)
      }
    }
    guard !scheduled.isEmpty else { return }
    // Weak: a LiveData released before the main actor gets to it is not kept alive by its delivery.
    Task { @MainActor in
      for entry in scheduled { entry.target?.runScheduledDispatch() }
    }
  }
}

/// A LiveData a scheduled dispatch will notify, unless it is gone by then.
private struct WeakCommitTarget: Sendable {
  weak var target: (any CommitNotifying)?
}

/// A LiveData, seen by a ``CommitEffect``: something that can notify its observers of a stored change.
protocol CommitNotifying: AnyObject, Sendable {
  func notifyAfterWrite(onMainActor: Bool, mustSchedule: Bool)
  /// Runs the main-actor dispatch scheduled by a write made off the main actor (`mustSchedule`).
  @MainActor func runScheduledDispatch()
}
