import Testing

@testable import PersistentLiveData

/// Nothing reaches an observer whose owner's scope is not active at the moment of delivery, whatever order
/// the scope notifies its subscribers and state observers in (Android checks `shouldBeActive()` at every
/// delivery); what it missed arrives when the scope is active again.
@MainActor @Suite struct InactiveOwnerDeliveryTests {
  @Test func valueSetByASubscribersDidBecomeInactiveWaitsForReactivation() {
    let data = MutableLiveData(0)
    let owner = ScopedOwner()
    let subscriber = SettingSubscriber(data, onInactive: 1)
    owner.scopeLifecycle.subscribe(subscriber)
    owner.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    observeWhileCheckingActivity(data, owner, recorder)
    recorder.expect([0])

    owner.scopeLifecycle.deactivate()
    #expect(data.value == 1)
    recorder.expectNothing("the scope is already inactive")
    #expect(!data.hasActiveObservers)

    owner.scopeLifecycle.activate()
    recorder.expect([1], "delivered on reactivation")
    data.set(2)
    recorder.expect([2])
  }

  @Test func valueSetByAnEarlierStateObserverOnDeactivationWaitsForReactivation() {
    let data = MutableLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    // Registered before the LiveData's observer, so it hears of the deactivation first.
    owner.scopeLifecycle.observeState { state in
      if state == .inactive { data.set(7) }
    }
    let recorder = DeliveryRecorder<Int>()
    observeWhileCheckingActivity(data, owner, recorder)
    recorder.expect([0])

    owner.scopeLifecycle.deactivate()
    recorder.expectNothing()
    owner.scopeLifecycle.activate()
    recorder.expect([7])
  }

  @Test func valueSetByASubscribersDidBecomeActiveArrivesOnceAfterActivation() {
    let data = MutableLiveData(0)
    let owner = ScopedOwner()
    let subscriber = SettingSubscriber(data, onActive: 3)
    owner.scopeLifecycle.subscribe(subscriber)
    let recorder = DeliveryRecorder<Int>()
    observeWhileCheckingActivity(data, owner, recorder)
    recorder.expectNothing("never activated")

    owner.scopeLifecycle.activate()
    recorder.expect([3], "only the newest version, once")
    owner.scopeLifecycle.deactivate()
    owner.scopeLifecycle.activate()
    #expect(data.version == 2)
    recorder.expect([3], "the second activation set 3 again: a new version")
  }

  @Test func scopeReactivatedByAnotherSubscriberReceivesTheValueItMissed() {
    let data = MutableLiveData(0)
    let owner = ScopedOwner()
    let setter = SettingSubscriber(data, onInactive: 1)
    let reactivator = Reactivator()
    owner.scopeLifecycle.subscribe(setter)
    owner.scopeLifecycle.subscribe(reactivator)
    owner.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    observeWhileCheckingActivity(data, owner, recorder)
    recorder.expect([0])

    reactivator.isEnabled = true
    owner.scopeLifecycle.deactivate()
    #expect(owner.scopeLifecycle.isActive, "reactivated from inside the deactivation")
    recorder.expect([1], "delivered once the scope is active again")
    #expect(data.hasActiveObservers)
    data.set(2)
    recorder.expect([2])
  }

  @Test func eventTriggeredByASubscribersDidBecomeInactiveDoesNotReachThatOwner() {
    let event = FutureEvent<Int>()
    let owner = ScopedOwner()
    let subscriber = TriggeringSubscriber(event)
    owner.scopeLifecycle.subscribe(subscriber)
    owner.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    event.observe(owner: owner) { owner, action in
      #expect(owner.scopeLifecycle.isActive, "event \(action) reached an inactive owner")
      recorder.record(action)
    }
    event.trigger(1)
    recorder.expect([1])

    owner.scopeLifecycle.deactivate()
    recorder.expectNothing("events are not replayed, and the owner is inactive")
    owner.scopeLifecycle.activate()
    recorder.expectNothing()
    event.trigger(2)
    recorder.expect([2])
  }

  /// Records the values delivered to an observer bound to `owner`, checking at each one that the owner's scope
  /// is active.
  private func observeWhileCheckingActivity(
    _ data: LiveData<Int>, _ owner: ScopedOwner, _ recorder: DeliveryRecorder<Int>
  ) {
    data.observe(owner: owner) { owner, value in
      #expect(owner.scopeLifecycle.isActive, "value \(value) reached an inactive owner")
      recorder.record(value)
    }
  }
}

/// Sets a value from its lifecycle callbacks.
@MainActor private final class SettingSubscriber: LifecycleSubscriber {
  let data: MutableLiveData<Int>
  let onActive: Int?
  let onInactive: Int?

  init(_ data: MutableLiveData<Int>, onActive: Int? = nil, onInactive: Int? = nil) {
    self.data = data
    self.onActive = onActive
    self.onInactive = onInactive
  }

  func didBecomeActive(_ lifecycle: ScopeLifecycle) {
    if let onActive { data.set(onActive) }
  }

  func didBecomeInactive(_ lifecycle: ScopeLifecycle) {
    if let onInactive { data.set(onInactive) }
  }
}

/// Activates the scope again from inside its deactivation, once enabled.
@MainActor private final class Reactivator: LifecycleSubscriber {
  var isEnabled = false

  func didBecomeInactive(_ lifecycle: ScopeLifecycle) {
    guard isEnabled else { return }
    isEnabled = false
    lifecycle.activate()
  }
}

/// Triggers an event when the scope becomes inactive.
@MainActor private final class TriggeringSubscriber: LifecycleSubscriber {
  let event: FutureEvent<Int>
  init(_ event: FutureEvent<Int>) { self.event = event }

  func didBecomeInactive(_ lifecycle: ScopeLifecycle) { event.trigger(99) }
}
