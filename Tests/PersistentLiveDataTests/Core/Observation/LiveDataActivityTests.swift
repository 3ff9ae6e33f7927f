import Testing

@testable import PersistentLiveData

/// `onActive`/`onInactive` fire only on 0 ↔ 1 transitions of the number of active observers.
@MainActor @Suite struct LiveDataActivityTests {
  @Test func firstActiveObserverCallsOnActiveOnce() {
    let live = CountingLiveData(0)
    #expect(!live.hasActiveObservers)
    live.observeForever { _ in }
    #expect(live.activeCalls == 1)
    live.observeForever { _ in }
    live.observeForever(receiveCurrent: false) { _ in }
    #expect(live.activeCalls == 1, "only the 0 → 1 transition calls onActive")
    #expect(live.inactiveCalls == 0)
    #expect(live.hasActiveObservers)
  }

  @Test func lastActiveObserverGoneCallsOnInactiveOnce() {
    let live = CountingLiveData(0)
    let first = live.observeForever { _ in }
    let second = live.observeForever { _ in }
    live.remove(observer: first)
    #expect(live.inactiveCalls == 0)
    live.remove(observer: second)
    #expect(live.inactiveCalls == 1)
    #expect(!live.hasActiveObservers)
    #expect(!live.hasObservers)
    #expect(live.activeCalls == 1)
  }

  @Test func activityCyclesCallEachHookOncePerTransition() {
    let live = CountingLiveData(0)
    for cycle in 1...3 {
      let observer = live.observeForever { _ in }
      #expect(live.activeCalls == cycle)
      live.remove(observer: observer)
      #expect(live.inactiveCalls == cycle)
    }
  }

  @Test func observerOfInactiveScopeDoesNotActivate() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    live.observe(owner: owner) { _ in }
    #expect(live.hasObservers)
    #expect(!live.hasActiveObservers)
    #expect(live.activeCalls == 0)

    owner.scopeLifecycle.activate()
    #expect(live.activeCalls == 1)
    #expect(live.hasActiveObservers)
  }

  @Test func scopeDeactivatingTheOnlyActiveObserverCallsOnInactive() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    live.observe(owner: owner) { _ in }
    #expect(live.activeCalls == 1)

    owner.scopeLifecycle.deactivate()
    #expect(live.inactiveCalls == 1)
    #expect(!live.hasActiveObservers)
    #expect(live.hasObservers)

    owner.scopeLifecycle.activate()
    #expect(live.activeCalls == 2)
  }

  @Test func twoObserversOfOneScopeMakeOneTransition() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    live.observe(owner: owner) { _ in }
    live.observe(owner: owner) { _ in }
    owner.scopeLifecycle.activate()
    #expect(live.activeCalls == 1)
    owner.scopeLifecycle.deactivate()
    #expect(live.inactiveCalls == 1)
  }

  @Test func foreverObserverKeepsLiveDataActiveWhenOwnerDeactivates() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    live.observe(owner: owner) { _ in }
    live.observeForever { _ in }
    #expect(live.activeCalls == 1)

    owner.scopeLifecycle.deactivate()
    #expect(live.inactiveCalls == 0)
    #expect(live.hasActiveObservers)
    owner.scopeLifecycle.activate()
    #expect(live.activeCalls == 1)
  }

  @Test func scopeDeinitializationOfTheOnlyActiveObserverCallsOnInactive() async {
    let live = CountingLiveData(0)
    var owner: ScopedOwner? = ScopedOwner()
    owner?.scopeLifecycle.activate()
    if let owner { live.observe(owner: owner) { _ in } }
    #expect(live.activeCalls == 1)

    owner = nil
    #expect(await eventually { live.inactiveCalls == 1 })
    #expect(!live.hasActiveObservers)
    #expect(live.inactiveCalls == 1)
  }

  @Test func removeAllObserversCallsOnInactiveOnce() {
    let live = CountingLiveData(0)
    for _ in 0..<3 { live.observeForever { _ in } }
    live.removeAllObservers()
    #expect(live.inactiveCalls == 1)
    #expect(!live.hasObservers)
  }

  @Test func cancellingTheOnlyObserverCallsOnInactive() async {
    let live = CountingLiveData(0)
    let observer = live.observeForever { _ in }
    observer.cancel()
    #expect(await eventually { live.inactiveCalls == 1 })
    #expect(!live.hasActiveObservers)
  }

  @Test func observerAddedInsideOnActiveCausesNoSecondCall() {
    let live = CountingLiveData(0)
    let added = DeliveryRecorder<Int>()
    live.whenActive = {
      live.whenActive = nil
      live.observeForever(added.callback)
    }
    let recorder = DeliveryRecorder<Int>()
    let first = live.observeForever(recorder.callback)
    recorder.expect([0])
    added.expect([0])
    #expect(live.activeCalls == 1)
    #expect(live.inactiveCalls == 0)

    live.remove(observer: first)
    #expect(live.inactiveCalls == 0, "the observer added in onActive is still active")
  }

  @Test func onlyObserverRemovedInsideOnActiveCausesOnInactive() {
    let live = CountingLiveData(0)
    let observer = Observer<Int> { _ in }
    live.whenActive = {
      live.whenActive = nil
      live.remove(observer: observer)
    }
    live.observeForever(observer: observer)
    #expect(live.activeCalls == 1)
    #expect(live.inactiveCalls == 1, "the 1 → 0 transition inside onActive is not missed")
    #expect(!live.hasActiveObservers)
    #expect(!live.hasObservers)
  }

  @Test func observerAddedInsideOnInactiveReactivates() {
    let live = CountingLiveData(0)
    let added = DeliveryRecorder<Int>()
    live.whenInactive = {
      live.whenInactive = nil
      live.observeForever(receiveCurrent: false, added.callback)
    }
    let observer = live.observeForever { _ in }
    live.remove(observer: observer)
    #expect(live.inactiveCalls == 1)
    #expect(live.activeCalls == 2, "the 0 → 1 transition inside onInactive is not missed")
    #expect(live.hasActiveObservers)
    live.set(1)
    added.expect([1])
  }

  @Test func observerRemovedInsideOnInactiveCausesNoSecondCall() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let bound = live.observe(owner: owner) { _ in }
    live.whenInactive = { live.remove(observer: bound) }
    owner.scopeLifecycle.deactivate()
    #expect(live.inactiveCalls == 1)
    #expect(live.activeCalls == 1)
    #expect(!live.hasObservers)
  }

  @Test func inactiveObserversDoNotCountAsActive() {
    let live = CountingLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    live.observe(owner: owner) { _ in }
    let inactiveOwner = ScopedOwner()
    live.observe(owner: inactiveOwner) { _ in }
    owner.scopeLifecycle.deactivate()
    #expect(live.inactiveCalls == 1)
    #expect(!live.hasActiveObservers)
    #expect(live.hasObservers)
  }
}
