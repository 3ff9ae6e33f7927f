import Testing

@testable import PersistentLiveData

/// Owner-bound observers: lifecycle owners gate delivery on their scope; any other owner is active while
/// alive; owners are never retained.
@MainActor @Suite struct LiveDataOwnerTests {
  @Test func observerOfNeverActivatedScopeReceivesNothing() {
    let owner = ScopedOwner()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    recorder.expectNothing()
    live.set(1)
    live.dispatch()
    recorder.expectNothing()
    #expect(live.hasObservers)
    #expect(!live.hasActiveObservers)
  }

  @Test func observerReceivesCurrentValueWhenScopeActivates() {
    let owner = ScopedOwner()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    live.set(1)
    recorder.expectNothing()

    owner.scopeLifecycle.activate()
    recorder.expect([1])
    #expect(live.hasActiveObservers)
  }

  @Test func observerOfActiveScopeReceivesCurrentValueAtRegistration() {
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let live = MutableLiveData(5)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    recorder.expect([5])
    live.set(6)
    recorder.expect([6])
  }

  @Test func inactiveScopeGetsOnlyTheLatestVersionOnceWhenReactivated() {
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    recorder.expect([0])

    owner.scopeLifecycle.deactivate()
    live.set(1)
    live.set(2)
    live.set(3)
    live.dispatch()
    recorder.expectNothing("nothing is delivered while the scope is inactive")

    owner.scopeLifecycle.activate()
    recorder.expect([3], "only the latest version, once")
    live.dispatch()
    recorder.expectNothing()
  }

  @Test func reactivationDeliversNothingWhenObserverAlreadyHasTheLatestVersion() {
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    live.set(1)
    recorder.expect([0, 1])

    owner.scopeLifecycle.deactivate()
    owner.scopeLifecycle.activate()
    recorder.expectNothing()
  }

  @Test func ownerPassingFormHandsTheOwnerToTheCallback() {
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let live = MutableLiveData(1)
    live.observe(owner: owner) { owner, value in owner.received.append(value) }
    live.set(2)
    #expect(owner.received == [1, 2])
  }

  @Test func observerIsRemovedWhenScopeIsDeinitialized() async {
    var owner: ScopedOwner? = ScopedOwner()
    weak let weakOwner = owner
    owner?.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    if let owner { live.observe(owner: owner, recorder.callback) }
    recorder.expect([0])

    owner = nil
    #expect(weakOwner == nil, "the owner is not retained by the LiveData")
    let removed = await eventually { !live.hasObservers }
    #expect(removed, "the observer goes when the scope reaches .deinitialized")

    live.set(1)
    live.dispatch()
    recorder.expectNothing("no callback after the scope is gone")
  }

  @Test func scopeStateDeinitializedRemovesOwnerPassingObserverToo() async {
    var owner: ScopedOwner? = ScopedOwner()
    weak let weakOwner = owner
    owner?.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let calls = Locked(0)
    if let owner { live.observe(owner: owner) { _, _ in calls.withLock { $0 += 1 } } }
    #expect(calls.value == 1)

    owner = nil
    #expect(weakOwner == nil)
    #expect(await eventually { !live.hasObservers })
    live.set(1)
    #expect(calls.value == 1)
  }

  @Test func plainOwnerIsActiveWhileAlive() {
    let owner = PlainOwner()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    recorder.expect([0])
    #expect(live.hasActiveObservers)
    live.set(1)
    recorder.expect([1])
  }

  @Test func plainOwnerObserverIsGoneAfterOwnerIsReleased() {
    var owner: PlainOwner? = PlainOwner()
    weak let weakOwner = owner
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    if let owner { live.observe(owner: owner, recorder.callback) }
    recorder.expect([0])

    owner = nil
    #expect(weakOwner == nil, "the owner is held weakly")
    live.set(1)
    live.dispatch()
    recorder.expectNothing("never called after its owner is gone")
    #expect(!live.hasObservers)
    #expect(!live.hasActiveObservers)
  }

  @Test func plainOwnerPassingFormIsNeverCalledAfterOwnerIsReleased() {
    var owner: PlainOwner? = PlainOwner()
    weak let weakOwner = owner
    let live = MutableLiveData(0)
    let calls = Locked(0)
    if let owner {
      live.observe(owner: owner) { owner, value in
        owner.received.append(value); calls.withLock { $0 += 1 }
      }
    }
    #expect(owner?.received == [0])

    owner = nil
    #expect(weakOwner == nil)
    live.set(1)
    #expect(calls.value == 1)
    #expect(!live.hasObservers)
  }

  @Test func ownersAreNotRetainedWhileTheirObserversAreRegistered() {
    let live = MutableLiveData(0)
    var scoped: ScopedOwner? = ScopedOwner()
    var plain: PlainOwner? = PlainOwner()
    weak let weakScoped = scoped
    weak let weakPlain = plain
    scoped?.scopeLifecycle.activate()
    if let scoped { live.observe(owner: scoped) { _ in } }
    if let scoped { live.observe(owner: scoped) { owner, value in owner.received.append(value) } }
    if let plain { live.observe(owner: plain) { _ in } }
    if let plain { live.observe(owner: plain) { owner, value in owner.received.append(value) } }
    #expect(live.hasObservers)

    scoped = nil
    plain = nil
    #expect(weakScoped == nil)
    #expect(weakPlain == nil)
  }

  @Test func scopeDeactivationStopsDeliveryButKeepsTheObserver() {
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, recorder.callback)
    recorder.expect([0])

    owner.scopeLifecycle.deactivate()
    #expect(live.hasObservers)
    #expect(!live.hasActiveObservers)
    live.set(1)
    recorder.expectNothing()
  }

  @Test func observersOfDifferentOwnersFollowTheirOwnScopes() {
    let first = ScopedOwner()
    let second = ScopedOwner()
    first.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let firstRecorder = DeliveryRecorder<Int>()
    let secondRecorder = DeliveryRecorder<Int>()
    live.observe(owner: first, firstRecorder.callback)
    live.observe(owner: second, secondRecorder.callback)
    firstRecorder.expect([0])
    secondRecorder.expectNothing()

    live.set(1)
    firstRecorder.expect([1])
    secondRecorder.expectNothing()

    second.scopeLifecycle.activate()
    secondRecorder.expect([1], "the latest version arrives on activation")
    first.scopeLifecycle.deactivate()
    live.set(2)
    firstRecorder.expectNothing()
    secondRecorder.expect([2])
  }

  @Test func removeObserversOfOwnerRemovesOnlyThatOwnersObservers() {
    let owner = PlainOwner()
    let other = PlainOwner()
    let live = MutableLiveData(0)
    let ownerRecorder = DeliveryRecorder<Int>()
    let otherRecorder = DeliveryRecorder<Int>()
    live.observe(owner: owner, ownerRecorder.callback)
    live.observe(owner: owner) { owner, value in owner.received.append(value) }
    live.observe(owner: other, otherRecorder.callback)
    ownerRecorder.expect([0])
    otherRecorder.expect([0])

    live.removeObservers(owner: owner)
    live.set(1)
    ownerRecorder.expectNothing()
    #expect(owner.received == [0])
    otherRecorder.expect([1])
    #expect(live.hasObservers)
  }

  @Test func observerObjectCanBeBoundToAnOwner() {
    let owner = ScopedOwner()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = Observer<Int>(update: recorder.callback)
    #expect(live.observe(owner: owner, observer: observer))
    recorder.expectNothing()
    owner.scopeLifecycle.activate()
    recorder.expect([0])
    #expect(live.remove(observer: observer))
    live.set(1)
    recorder.expectNothing()
  }
}
