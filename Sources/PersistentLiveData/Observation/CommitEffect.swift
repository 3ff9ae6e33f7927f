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
    deliveries.append(contentsOf: other.deliveries)
  }

  /// Notifies, in commit order: synchronously when the write was made on the main actor, otherwise
  /// through the one main-actor dispatch its LiveData scheduled (coalescing to the latest). Call it with
  /// no store lock held.
  package func notifyObservers() {
    for delivery in deliveries {
      delivery.target.notifyAfterWrite(onMainActor: delivery.onMainActor, mustSchedule: delivery.mustSchedule)
    }
  }
}

/// A LiveData, seen by a ``CommitEffect``: something that can notify its observers of a stored change.
protocol CommitNotifying: AnyObject, Sendable {
  func notifyAfterWrite(onMainActor: Bool, mustSchedule: Bool)
}
