import Testing

@testable import PersistentLiveData

/// `map`, `distinctUntilChanged`, `switchMap` and `MediatorLiveData`.
@MainActor @Suite struct TransformationTests {
  // MARK: map

  @Test func mapIsInitializedEagerly() {
    let source = MutableLiveData(2)
    let mapped = source.map { "#\($0)" }
    #expect(mapped.isInitialized)
    #expect(mapped.version >= 0, "initialized, not at version -1")
    #expect(mapped.value == "#2", "the value is there before anyone observes")
  }

  @Test func mapFollowsTheSource() {
    let source = MutableLiveData(1)
    let mapped = source.map { $0 * 10 }
    let recorder = DeliveryRecorder<Int>()
    mapped.observeForever(recorder.callback)
    // Registration delivers the mapped current value (possibly through the re-plugged source, but never a
    // different value).
    let initial = recorder.takePending()
    #expect(!initial.isEmpty)
    #expect(initial.allSatisfy { $0 == 10 }, "\(initial)")

    source.set(2)
    recorder.expect([20])
    source.set(3)
    recorder.expect([30])
    #expect(mapped.value == 30)
  }

  @Test func mapFollowsOffMainSets() async {
    let source = MutableLiveData(0)
    let mapped = source.map { $0 + 1 }
    let recorder = DeliveryRecorder<Int>()
    mapped.observeForever(receiveCurrent: false, recorder.callback)
    _ = recorder.takePending()
    await Task.detached { source.set(41) }.value
    await recorder.waitForLast(42)
    recorder.expect([42])
  }

  @Test func mapObservesItsSourceOnlyWhileObserved() {
    let source = MutableLiveData(1)
    let calls = Locked(0)
    let mapped = source.map { value -> Int in
      calls.withLock { $0 += 1 }
      return value
    }
    let afterCreation = calls.value
    source.set(2)
    source.set(3)
    #expect(calls.value == afterCreation, "no observer, so the source is not observed")
    #expect(!source.hasObservers)

    let observer = mapped.observeForever { _ in }
    #expect(mapped.value == 3)
    #expect(source.hasObservers)
    mapped.remove(observer: observer)
    #expect(!source.hasObservers)
  }

  // MARK: distinctUntilChanged

  @Test func distinctUntilChangedDropsEqualConsecutiveValues() {
    let source = MutableLiveData(1)
    let distinct = source.distinctUntilChanged()
    #expect(distinct.isInitialized)
    #expect(distinct.value == 1)
    let recorder = DeliveryRecorder<Int>()
    distinct.observeForever(recorder.callback)
    recorder.expect([1])

    source.set(1)
    recorder.expectNothing("equal to the current value")
    source.set(2)
    source.set(2)
    source.set(2)
    recorder.expect([2])
    source.set(1)
    source.set(1)
    recorder.expect([1], "equal to an older value, but not to the last one")
  }

  // MARK: switchMap

  @Test func switchMapFollowsTheSelectedBackingLiveData() {
    let first = MutableLiveData("a0")
    let second = MutableLiveData("b0")
    let selector = MutableLiveData(1)
    let switched = selector.switchMap { index -> LiveData<String>? in index == 1 ? first : second }
    let recorder = DeliveryRecorder<String?>()
    switched.observeForever(recorder.callback)
    let initial = recorder.takePending()
    #expect(initial.last == "a0", "\(initial)")
    #expect(initial.allSatisfy { $0 == "a0" }, "\(initial)")

    first.set("a1")
    recorder.expect(["a1"])

    selector.set(2)
    recorder.expect(["b0"])
    second.set("b1")
    recorder.expect(["b1"])
  }

  @Test func switchMapIgnoresThePreviousBackingLiveData() {
    let first = MutableLiveData("a0")
    let second = MutableLiveData("b0")
    let selector = MutableLiveData(1)
    let switched = selector.switchMap { index -> LiveData<String>? in index == 1 ? first : second }
    let recorder = DeliveryRecorder<String?>()
    switched.observeForever(recorder.callback)
    _ = recorder.takePending()
    selector.set(2)
    recorder.expect(["b0"])

    first.set("a1")
    first.set("a2")
    recorder.expectNothing("the old backing LiveData is no longer followed")
    #expect(switched.value == "b0")
    #expect(!first.hasObservers)
    #expect(second.hasObservers)
  }

  @Test func switchMapToNilStopsFollowing() {
    let backing = MutableLiveData("x")
    let selector = MutableLiveData(true)
    let switched = selector.switchMap { follow -> LiveData<String>? in follow ? backing : nil }
    let recorder = DeliveryRecorder<String?>()
    switched.observeForever(recorder.callback)
    _ = recorder.takePending()

    selector.set(false)
    backing.set("y")
    #expect(!backing.hasObservers)
    #expect(!recorder.pending.contains("y"))
    _ = recorder.takePending()
  }

  @Test func switchMapObservesItsBackingOnlyWhileObserved() {
    let backing = MutableLiveData(1)
    let selector = MutableLiveData(0)
    let switched = selector.switchMap { _ -> LiveData<Int>? in backing }
    #expect(!selector.hasObservers)
    #expect(!backing.hasObservers)
    let observer = switched.observeForever { _ in }
    #expect(selector.hasObservers)
    #expect(backing.hasObservers)
    switched.remove(observer: observer)
    #expect(!selector.hasObservers)
    #expect(!backing.hasObservers)
  }

  // MARK: MediatorLiveData

  @Test func mediatorObservesSourcesOnlyWhileItHasActiveObservers() {
    let source = MutableLiveData(1)
    let mediator = MediatorLiveData(0)
    mediator.addSource(source) { [weak mediator] value in mediator?.set(value * 10) }
    #expect(!source.hasObservers, "no active observer on the mediator yet")
    source.set(2)
    #expect(mediator.value == 0)

    let owner = ScopedOwner()
    let recorder = DeliveryRecorder<Int>()
    mediator.observe(owner: owner, recorder.callback)
    #expect(!source.hasObservers, "an inactive observer does not make the mediator active")
    recorder.expectNothing()

    owner.scopeLifecycle.activate()
    #expect(source.hasObservers)
    #expect(mediator.value == 20)
    #expect(recorder.takePending().last == 20)

    source.set(3)
    recorder.expect([30])

    owner.scopeLifecycle.deactivate()
    #expect(!source.hasObservers, "false again once the mediator has no active observer")
    source.set(4)
    #expect(mediator.value == 30)
    recorder.expectNothing()
  }

  @Test func removeSourceStopsForwarding() {
    let source = MutableLiveData(1)
    let other = MutableLiveData("x")
    let mediator = MediatorLiveData(0)
    let log = CallLog<String>()
    mediator.addSource(source) { [weak mediator] value in mediator?.set(value) }
    mediator.addSource(other) { log.append($0) }
    let recorder = DeliveryRecorder<Int>()
    mediator.observeForever(recorder.callback)
    _ = recorder.takePending()
    source.set(2)
    recorder.expect([2])

    mediator.removeSource(source)
    #expect(!source.hasObservers)
    source.set(3)
    recorder.expectNothing()
    #expect(mediator.value == 2)

    other.set("y")
    #expect(log.entries.last == "y", "the other source still forwards")
    #expect(other.hasObservers)
  }

  @Test func mediatorIsSettableDirectly() {
    let mediator = MediatorLiveData("start")
    let recorder = DeliveryRecorder<String>()
    mediator.observeForever(recorder.callback)
    recorder.expect(["start"])
    mediator.set("direct")
    recorder.expect(["direct"])
  }
}
