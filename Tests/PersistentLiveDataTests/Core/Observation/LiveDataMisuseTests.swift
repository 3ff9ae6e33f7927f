import Testing

@testable import PersistentLiveData

/// Misuse that crashed the seeds: here it returns false or does nothing, and never crashes.
@MainActor @Suite struct LiveDataMisuseTests {
  @Test func registeringTheSameObserverTwiceReturnsFalse() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = Observer<Int>(update: recorder.callback)
    #expect(live.observeForever(observer: observer))
    #expect(!live.observeForever(observer: observer))
    #expect(!live.observe(owner: PlainOwner(), observer: observer))
    recorder.expect([0], "registered once, delivered once")
    live.set(1)
    recorder.expect([1])
  }

  @Test func registeringTheSameOwnerBoundObserverTwiceReturnsFalse() {
    let live = MutableLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    let observer = Observer<Int>(update: recorder.callback)
    #expect(live.observe(owner: owner, observer: observer))
    #expect(!live.observe(owner: owner, observer: observer))
    #expect(!live.observeForever(observer: observer))
    recorder.expect([0])
    live.set(1)
    recorder.expect([1])
  }

  @Test func removingAnUnknownObserverReturnsFalse() {
    let live = MutableLiveData(0)
    #expect(!live.remove(observer: Observer<Int> { _ in }))
    let observer = live.observeForever { _ in }
    #expect(live.remove(observer: observer))
    #expect(!live.remove(observer: observer), "already removed")
  }

  @Test func removingAnObserverOfAnotherLiveDataReturnsFalseAndKeepsIt() {
    let live = MutableLiveData(0)
    let other = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = other.observeForever(recorder.callback)
    recorder.expect([0])
    #expect(!live.remove(observer: observer))
    other.set(1)
    recorder.expect([1])
  }

  @Test func dispatchToUnknownInitiatorDoesNothing() {
    let live = MutableLiveData(0)
    let registered = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, registered.callback)
    let stranger = DeliveryRecorder<Int>()
    let unknown = Observer<Int>(update: stranger.callback)

    live.dispatch(initiator: unknown)
    stranger.expectNothing("an observer that is not registered is never called")
    registered.expectNothing("dispatch(initiator:) reaches only the initiator")
  }

  @Test func dispatchToRemovedInitiatorDoesNothing() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(receiveCurrent: false, recorder.callback)
    live.remove(observer: observer)
    live.dispatch(initiator: observer)
    live.set(1)
    live.dispatch(initiator: observer)
    recorder.expectNothing()
  }

  @Test func cancellingTwiceIsHarmless() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)
    recorder.expect([0])
    observer.cancel()
    observer.cancel()
    live.set(1)
    recorder.expectNothing()
    #expect(await eventually { !live.hasObservers })
    observer.cancel()
  }

  @Test func cancellingAnUnregisteredObserverIsHarmless() {
    let observer = Observer<Int> { _ in }
    observer.cancel()
    observer.cancel()
    let live = MutableLiveData(0)
    #expect(!live.remove(observer: observer))
  }

  @Test func cancelRemovesTheObserverFromItsLiveData() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let kept = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)
    let keptObserver = live.observeForever(kept.callback)
    recorder.expect([0])
    kept.expect([0])

    observer.cancel()
    live.set(1)
    recorder.expectNothing()
    kept.expect([1], "other observers are unaffected")

    #expect(live.remove(observer: keptObserver))
    #expect(await eventually { !live.hasObservers }, "the cancelled observer is no longer registered")
  }

  @Test func cancelFromAnotherThreadStopsCallbacksBeforeReturning() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)
    recorder.expect([0])

    #expect(runOnThreadsBlocking(1) { _ in observer.cancel() })
    live.set(1)
    live.dispatch()
    recorder.expectNothing("no callback after cancel() returned on another thread")
    #expect(await eventually { !live.hasObservers })
    live.set(2)
    recorder.expectNothing()
  }

  @Test func cancelFromAnotherThreadWhileOffMainDeliveryIsPendingStopsIt() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)
    let witness = DeliveryRecorder<Int>()
    live.observeForever(witness.callback)
    recorder.expect([0])
    witness.expect([0])

    // The set schedules a delivery; the cancel returns before the main actor can run it.
    #expect(
      runOnThreadsBlocking(1) { _ in
        live.set(1)
        observer.cancel()
      })
    await witness.waitForLast(1)
    witness.expect([1])
    recorder.expectNothing("the pending delivery must not reach a cancelled observer")
  }

  @Test func removeObserversOfUnknownOwnerDoesNothing() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let owner = PlainOwner()
    live.observe(owner: owner, recorder.callback)
    recorder.expect([0])
    live.removeObservers(owner: PlainOwner())
    live.removeObservers(owner: ScopedOwner())
    #expect(live.hasObservers)
    live.set(1)
    recorder.expect([1])
    withExtendedLifetime(owner) {}
  }

  @Test func removeAllObserversRemovesForeverAndOwnerBoundObservers() {
    let live = MutableLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let plain = PlainOwner()
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    live.observe(owner: owner, recorder.callback)
    live.observe(owner: plain, recorder.callback)
    live.observe(owner: plain) { _, value in recorder.record(value) }
    recorder.expect([0, 0, 0, 0])

    live.removeAllObservers()
    #expect(!live.hasObservers)
    #expect(!live.hasActiveObservers)
    live.set(1)
    owner.scopeLifecycle.deactivate()
    owner.scopeLifecycle.activate()
    recorder.expectNothing()
    live.removeAllObservers()
  }

  @Test func removedObserverCanBeRegisteredAgain() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = Observer<Int>(update: recorder.callback)
    #expect(live.observeForever(observer: observer))
    #expect(live.remove(observer: observer))
    #expect(live.observeForever(observer: observer))
    live.set(1)
    // Whether re-registering redelivers version 0 is the implementation's choice; version 1 arrives once.
    let seen = recorder.takePending()
    #expect(seen.first == 0)
    #expect(seen.last == 1)
    #expect(seen.filter { $0 == 1 }.count == 1)
  }

  @Test func observersAreIdentityBasedHashable() {
    let first = Observer<Int> { _ in }
    let second = Observer<Int> { _ in }
    #expect(first == first)
    #expect(first != second)
    #expect(Set([first, second, first]).count == 2)
  }
}
