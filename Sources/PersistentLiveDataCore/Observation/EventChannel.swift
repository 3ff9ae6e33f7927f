/// The delivery machinery shared by ``FutureEvent`` and ``SingleEvent``: actions reach the observers that
/// are active when the action is delivered, in trigger order, and nothing is replayed.
///
/// Main-actor isolated, except ``send(_:isolation:)``, isolated to its caller: what it shares with
/// the main actor is the `pending` queue, guarded by its lock.
@MainActor final class EventChannel<Action: Sendable> {
  let registry = ObserverRegistry<Action>()
  /// Actions triggered off the main actor, waiting for the scheduled main-actor drain.
  private nonisolated let pending = Locked<(actions: [Action], drainScheduled: Bool)>(([], false))
  /// Actions triggered on the main actor while a delivery was running.
  private var queued: [Action] = []
  private var isDelivering = false
  /// Whether observers are released once an action has been delivered (single events).
  private let releasesObserversAfterDelivery: Bool

  nonisolated init(releasesObserversAfterDelivery: Bool = false) {
    self.releasesObserversAfterDelivery = releasesObserversAfterDelivery
  }

  /// Delivers `action` now (main actor) or schedules it (anywhere else).
  func send(_ action: Action, isolation: isolated (any Actor)?) {
    if isolation === MainActor.shared {
      MainActor.assumeIsolated { deliver(action) }
      return
    }
    let mustSchedule = pending.withLock { pending -> Bool in
      pending.actions.append(action)
      guard !pending.drainScheduled else { return false }
      pending.drainScheduled = true
      return true
    }
    guard mustSchedule else { return }
    Task { @MainActor [weak self] in
      guard let self else { return }
      let actions = self.pending.withLock { pending in
        defer {
          pending.actions.removeAll()
          pending.drainScheduled = false
        }
        return pending.actions
      }
      for action in actions { self.deliver(action) }
    }
  }

  /// Delivers to every active observer; an action triggered from a callback waits until this one has
  /// reached everybody, so all observers see actions in the same order.
  private func deliver(_ action: Action) {
    queued.append(action)
    guard !isDelivering else { return }
    isDelivering = true
    defer { isDelivering = false }
    while !queued.isEmpty {
      let next = queued.removeFirst()
      // Only the observers registered when the action is delivered receive it: one added by a callback
      // waits for the next action.
      registry.beginIteration()
      defer { registry.endIteration() }
      for entry in registry.entries where entry.isActive && !entry.isRemoved {
        if entry.isDead {
          registry.remove(entry)
        } else if entry.scopeIsNotActive {
          registry.deactivateUntilScopeIsActive(entry)
        } else {
          entry.observer.update(next)
        }
      }
    }
    if releasesObserversAfterDelivery { registry.removeAll { _ in true } }
  }

  func register(_ observer: Observer<Action>, owner: AnyObject?) -> Bool {
    registry.register(observer, owner: owner, deliversCurrent: false, deliveredVersion: -1) != nil
  }
}
