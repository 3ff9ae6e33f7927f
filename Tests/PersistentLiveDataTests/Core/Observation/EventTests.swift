import Testing

@testable import PersistentLiveData

/// `FutureEvent`: stateless triggers that reach only observers active at trigger time.
@MainActor @Suite struct FutureEventTests {
  @Test func triggerReachesActiveObserversSynchronouslyOnMainActor() {
    let event = FutureEvent<Int>()
    let first = DeliveryRecorder<Int>()
    let second = DeliveryRecorder<Int>()
    event.observeForever(first.callback)
    event.observeForever(second.callback)
    first.expectNothing("nothing is replayed at registration")
    event.trigger(1)
    event.trigger(1)
    first.expect([1, 1], "every trigger is delivered, equal ones included")
    second.expect([1, 1])
  }

  @Test func lateObserverGetsNothingReplayed() {
    let event = FutureEvent<String>()
    event.trigger("before anyone listened")
    let recorder = DeliveryRecorder<String>()
    event.observeForever(recorder.callback)
    recorder.expectNothing()
    event.trigger("after")
    recorder.expect(["after"])
  }

  @Test func observerOfInactiveScopeMissesTriggersForGood() {
    let event = FutureEvent<Int>()
    let owner = ScopedOwner()
    let recorder = DeliveryRecorder<Int>()
    event.observe(owner: owner, recorder.callback)
    event.trigger(1)
    owner.scopeLifecycle.activate()
    recorder.expectNothing("a trigger missed while inactive is not delivered on activation")

    event.trigger(2)
    recorder.expect([2])
    owner.scopeLifecycle.deactivate()
    event.trigger(3)
    owner.scopeLifecycle.activate()
    recorder.expectNothing()
  }

  @Test func voidTriggerReachesObservers() {
    let event = FutureEvent<Void>()
    let calls = Locked(0)
    event.observeForever { calls.withLock { $0 += 1 } }
    event.trigger()
    event.trigger()
    #expect(calls.value == 2)
  }

  @Test func removedObserverGetsNothing() {
    let event = FutureEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    let observer = event.observeForever(recorder.callback)
    #expect(event.hasObservers)
    #expect(event.remove(observer: observer))
    #expect(!event.remove(observer: observer))
    #expect(!event.hasObservers)
    event.trigger(1)
    recorder.expectNothing()
  }

  @Test func observerOfReleasedOwnerIsGone() {
    let event = FutureEvent<Int>()
    var owner: PlainOwner? = PlainOwner()
    weak let weakOwner = owner
    let recorder = DeliveryRecorder<Int>()
    if let owner { event.observe(owner: owner, recorder.callback) }
    event.trigger(1)
    recorder.expect([1])

    owner = nil
    #expect(weakOwner == nil, "the owner is held weakly")
    event.trigger(2)
    recorder.expectNothing()
    #expect(!event.hasObservers)
  }

  @Test func observerOfDeinitializedScopeIsGone() async {
    let event = FutureEvent<Int>()
    var owner: ScopedOwner? = ScopedOwner()
    owner?.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    if let owner { event.observe(owner: owner, recorder.callback) }
    owner = nil
    #expect(await eventually { !event.hasObservers })
    event.trigger(1)
    recorder.expectNothing()
  }

  @Test func triggersFromAnotherThreadArriveOnMainActorInOrder() async {
    let event = FutureEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    event.observeForever(recorder.callback)

    #expect(
      runOnThreadsBlocking(1) { _ in
        for value in 1...200 { event.trigger(value) }
      })
    recorder.expectNothing("delivery is scheduled on the main actor, not run on the triggering thread")
    await recorder.waitForLast(200)
    recorder.expect(Array(1...200), "events are not coalesced and keep their order")
  }

  @Test func triggersFromADetachedTaskArriveInOrder() async {
    let event = FutureEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    event.observeForever(recorder.callback)

    await Task.detached {
      for value in 1...100 {
        event.trigger(value)
        if value.isMultiple(of: 10) { await Task.yield() }
      }
    }.value
    await recorder.waitForLast(100)
    recorder.expect(Array(1...100))
  }

  @Test func voidTriggerFromAnotherActorArrives() async {
    let event = FutureEvent<Void>()
    let calls = Locked(0)
    event.observeForever { calls.withLock { $0 += 1 } }
    await EventSource().fire(event)
    #expect(await eventually { calls.value == 1 })
  }

  @Test func observerAddedInsideCallbackMissesTheCurrentTrigger() {
    let event = FutureEvent<Int>()
    let added = DeliveryRecorder<Int>()
    let first = DeliveryRecorder<Int>()
    event.observeForever { value in
      first.record(value)
      if value == 1 { event.observeForever(added.callback) }
    }
    event.trigger(1)
    first.expect([1])
    added.expectNothing("it was not active when the trigger happened")
    event.trigger(2)
    first.expect([2])
    added.expect([2])
  }
}

/// `SingleEvent`: only the first trigger is delivered.
@MainActor @Suite struct SingleEventTests {
  @Test func onlyTheFirstTriggerIsDeliveredAndReturnsTrue() {
    let event = SingleEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    event.observeForever(recorder.callback)
    #expect(!event.isTriggered)

    #expect(event.trigger(1))
    #expect(event.isTriggered)
    recorder.expect([1])
    #expect(!event.trigger(2))
    #expect(!event.trigger(1))
    recorder.expectNothing()
    #expect(event.isTriggered)
  }

  @Test func observingATriggeredEventDeliversNothing() {
    let event = SingleEvent<String>()
    event.trigger("done")
    let recorder = DeliveryRecorder<String>()
    let owner = ScopedOwner()
    owner.scopeLifecycle.activate()
    event.observeForever(recorder.callback)
    event.observe(owner: owner, recorder.callback)
    #expect(!event.trigger("again"))
    recorder.expectNothing()
  }

  @Test func observerOfInactiveScopeMissesTheTrigger() {
    let event = SingleEvent<Int>()
    let owner = ScopedOwner()
    let recorder = DeliveryRecorder<Int>()
    event.observe(owner: owner, recorder.callback)
    #expect(event.trigger(1))
    owner.scopeLifecycle.activate()
    recorder.expectNothing()
  }

  @Test func removedObserverGetsNothing() {
    let event = SingleEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    let observer = event.observeForever(recorder.callback)
    #expect(event.remove(observer: observer))
    #expect(!event.remove(observer: observer))
    event.trigger(1)
    recorder.expectNothing()
  }

  @Test func exactlyOneOfConcurrentTriggersWins() async {
    let event = SingleEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    event.observeForever(recorder.callback)
    let winners = Locked<[Int]>([])

    let finished = await runOnThreads(8) { index in
      if event.trigger(index) { winners.withLock { $0.append(index) } }
    }
    #expect(finished)
    #expect(winners.value.count == 1)
    #expect(event.isTriggered)
    guard let winner = winners.value.first else { return }
    await recorder.waitForLast(winner)
    recorder.expect([winner], "the winning trigger is the one delivered, once")
  }

  @Test func triggerFromAnotherThreadIsDeliveredOnceOnMainActor() async {
    let event = SingleEvent<Int>()
    let recorder = DeliveryRecorder<Int>()
    event.observeForever(recorder.callback)
    let results = Locked<[Bool]>([])
    #expect(
      runOnThreadsBlocking(1) { _ in
        let first = event.trigger(1)
        let second = event.trigger(2)
        results.withLock { $0 = [first, second] }
      })
    #expect(results.value == [true, false])
    recorder.expectNothing()
    await recorder.waitForLast(1)
    recorder.expect([1])
    #expect(!event.trigger(3))
    recorder.expectNothing()
  }

  @Test func voidSingleEventTriggersOnce() {
    let event = SingleEvent<Void>()
    let calls = Locked(0)
    event.observeForever { calls.withLock { $0 += 1 } }
    #expect(event.trigger(()))
    #expect(!event.trigger(()))
    #expect(calls.value == 1)
  }
}

/// An actor triggering an event from its own isolation.
private actor EventSource {
  func fire(_ event: FutureEvent<Void>) {
    event.trigger()
  }
}
