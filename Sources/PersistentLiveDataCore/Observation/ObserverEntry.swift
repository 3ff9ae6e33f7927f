/// What an observer is bound to, which decides when it is active.
enum ObserverBinding {
  /// `observeForever`: always active until removed.
  case forever
  /// A plain object: active while it is alive.
  case object
  /// A lifecycle: active while its state is `.active`, removed at `.deinitialized`.
  case lifecycle
}

/// One registration of an observer with a registry; main-actor state, like the registry that owns it.
@MainActor package final class ObserverEntry<Value: Sendable> {
  let observer: Observer<Value>
  let binding: ObserverBinding
  /// The owner, never retained. `nil` for forever observers.
  weak var owner: AnyObject?
  /// The state of the owner's scope (`.lifecycle` binding only), read at every delivery.
  let scopeState: LifecycleStateCell?
  // The fields read for every delivery skip dynamic exclusivity checks: they are only touched on the
  // main actor, and never through overlapping inout accesses.
  /// The newest version this observer has been given.
  @exclusivity(unchecked) package var deliveredVersion: Int64
  /// Active (and not removed): deliveries reach it.
  @exclusivity(unchecked) var isActive = false
  @exclusivity(unchecked) var isRemoved = false
  /// Whether becoming active should deliver the current value (false only while registering with
  /// `receiveCurrent: false`).
  var deliversOnActivation = true
  /// The observation of the owner's scope (`.lifecycle` binding only); it keeps the LiveData alive.
  var lifecycleSubscription: LifecycleStateObservation?

  init(
    observer: Observer<Value>, binding: ObserverBinding, owner: AnyObject?, scopeState: LifecycleStateCell?,
    deliveredVersion: Int64
  ) {
    self.observer = observer
    self.binding = binding
    self.owner = owner
    self.scopeState = scopeState
    self.deliveredVersion = deliveredVersion
  }

  /// Whether the entry can no longer receive anything: cancelled, or its owner is gone.
  var isDead: Bool {
    observer.isCancelled || (binding != .forever && owner == nil)
  }

  /// Whether the owner's scope has left `.active` although the entry has not been told yet: the scope
  /// notifies subscribers and state observers one after the other, and any of them may set a value.
  var scopeIsNotActive: Bool {
    guard let scopeState else { return false }
    return scopeState.value != .active
  }
}
