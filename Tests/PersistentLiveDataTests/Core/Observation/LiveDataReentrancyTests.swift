import Testing

@testable import PersistentLiveData

/// Delivery order and what happens when callbacks add, remove or set during a dispatch.
@MainActor @Suite struct LiveDataReentrancyTests {
  @Test func observersAreCalledInRegistrationOrder() {
    let live = MutableLiveData(0)
    let log = CallLog<String>()
    let owner = PlainOwner()
    live.observeForever { log.append("a\($0)") }
    live.observe(owner: owner) { log.append("b\($0)") }
    live.observeForever(observer: Observer { log.append("c\($0)") })
    live.observe(owner: owner) { _, value in log.append("d\(value)") }
    live.observeForever { log.append("e\($0)") }
    #expect(log.entries == ["a0", "b0", "c0", "d0", "e0"])

    live.set(1)
    #expect(log.entries.suffix(5) == ["a1", "b1", "c1", "d1", "e1"])
  }

  @Test func registrationOrderHoldsForManyObservers() {
    let live = MutableLiveData(0)
    let log = CallLog<Int>()
    for index in 0..<50 {
      live.observeForever(receiveCurrent: false) { _ in log.append(index) }
    }
    live.set(1)
    #expect(log.entries == Array(0..<50))
  }

  @Test func observerRemovedByAnEarlierObserverIsNotCalledLaterInTheDispatch() {
    let live = MutableLiveData(0)
    let second = DeliveryRecorder<Int>()
    let third = DeliveryRecorder<Int>()
    let secondObserver = Observer<Int>(update: second.callback)
    live.observeForever { value in
      if value == 1 { live.remove(observer: secondObserver) }
    }
    live.observeForever(observer: secondObserver)
    live.observeForever(third.callback)
    second.expect([0])
    third.expect([0])

    live.set(1)
    second.expectNothing("removed before its turn in this dispatch")
    third.expect([1], "later observers are still called")
    live.set(2)
    second.expectNothing()
    third.expect([2])
  }

  @Test func observerCancelledByAnEarlierObserverIsNotCalledLaterInTheDispatch() {
    let live = MutableLiveData(0)
    let second = DeliveryRecorder<Int>()
    let secondObserver = Observer<Int>(update: second.callback)
    live.observeForever { value in
      if value == 1 { secondObserver.cancel() }
    }
    live.observeForever(observer: secondObserver)
    second.expect([0])

    live.set(1)
    second.expectNothing("cancelled before its turn in this dispatch")
  }

  @Test func observerRemovedDuringDispatchIsNotReachedByTheRestart() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = Observer<Int>(update: recorder.callback)
    live.observeForever(observer: observer)
    live.observeForever { value in
      if value == 1 {
        live.remove(observer: observer)
        live.set(2)
      }
    }
    recorder.expect([0])
    live.set(1)
    recorder.expect([1], "removed in the same dispatch, so the restart does not reach it")
    #expect(live.value == 2)
  }

  @Test func observerAddedDuringDispatchGetsTheValueExactlyOnce() {
    let live = MutableLiveData(0)
    let added = DeliveryRecorder<Int>()
    let first = DeliveryRecorder<Int>()
    live.observeForever { value in
      first.record(value)
      if value == 1 { live.observeForever(added.callback) }
    }
    live.observeForever { _ in }
    first.expect([0])

    live.set(1)
    first.expect([1])
    added.expect([1], "the new observer receives the current value once, not twice")
    live.set(2)
    first.expect([2])
    added.expect([2])
  }

  @Test func ownerBoundObserverAddedDuringDispatchGetsTheValueExactlyOnce() {
    let live = MutableLiveData(0)
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    let added = DeliveryRecorder<Int>()
    live.observeForever { value in
      if value == 1 { live.observe(owner: owner, added.callback) }
    }
    live.set(1)
    added.expect([1])
  }

  @Test func valueSetInsideCallbackRestartsDispatchWithTheNewestValue() {
    let live = MutableLiveData(0)
    let first = DeliveryRecorder<Int>()
    let second = DeliveryRecorder<Int>()
    let third = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, first.callback)
    live.observeForever(receiveCurrent: false) { value in
      second.record(value)
      if value == 1 { live.set(2) }
    }
    live.observeForever(receiveCurrent: false, third.callback)

    live.set(1)
    first.expect([1, 2])
    second.expect([1, 2])
    third.expect([2], "observers after the setter never see the intermediate value")
    #expect(live.value == 2)
    #expect(live.version == 2)
  }

  @Test func repeatedSetsInsideCallbacksEndEveryObserverOnTheNewestValueOnce() {
    let live = MutableLiveData(0)
    let recorders = (0..<4).map { _ in DeliveryRecorder<Int>() }
    live.observeForever(receiveCurrent: false, recorders[0].callback)
    live.observeForever(receiveCurrent: false) { value in
      recorders[1].record(value)
      if value < 5 { live.set(value + 1) }
    }
    live.observeForever(receiveCurrent: false, recorders[2].callback)
    live.observeForever(receiveCurrent: false) { value in
      recorders[3].record(value)
      if value == 5 { live.set(10) }
    }

    live.set(1)
    #expect(live.value == 10)
    for (index, recorder) in recorders.enumerated() {
      let seen = recorder.takePending()
      #expect(seen.last == 10, "observer \(index) ends on the newest value: \(seen)")
      #expect(seen == seen.sorted() && Set(seen).count == seen.count, "observer \(index): \(seen)")
    }
    for recorder in recorders { recorder.expectNothing() }
  }

  @Test func observerRemovingItselfInItsCallbackIsNotCalledAgain() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = Locked<Observer<Int>?>(nil)
    let created = Observer<Int> { value in
      recorder.record(value)
      if value == 1, let observer = observer.value { live.remove(observer: observer) }
    }
    observer.withLock { $0 = created }
    live.observeForever(observer: created)
    recorder.expect([0])
    live.set(1)
    recorder.expect([1])
    live.set(2)
    recorder.expectNothing()
    #expect(!live.hasObservers)
  }

  @Test func dispatchInsideCallbackDeliversNothingTwice() {
    let live = MutableLiveData(0)
    let first = DeliveryRecorder<Int>()
    let second = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false) { value in
      first.record(value)
      live.dispatch()
    }
    live.observeForever(receiveCurrent: false, second.callback)

    live.set(1)
    first.expect([1])
    second.expect([1])
  }

  @Test func setInsideCallbackFromOwnerPassingFormRestartsDispatch() {
    let live = MutableLiveData(0)
    let owner = PlainOwner()
    let last = DeliveryRecorder<Int>()
    live.observe(owner: owner, receiveCurrent: false) { owner, value in
      owner.received.append(value)
      if value == 1 { live.set(2) }
    }
    live.observeForever(receiveCurrent: false, last.callback)
    live.set(1)
    #expect(owner.received == [1, 2])
    last.expect([2])
  }
}
