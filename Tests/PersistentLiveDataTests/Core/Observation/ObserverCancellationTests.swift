import Testing

@testable import PersistentLiveData

/// Observers as `Cancellable`s: `DisposeBag`, `disposed(by:)` and `autoCancel`.
@MainActor @Suite struct ObserverCancellationTests {
  @Test func releasedDisposeBagCancelsItsObservers() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    var bag: DisposeBag? = DisposeBag()
    if let bag {
      live.observeForever(recorder.callback).disposed(by: bag)
      live.observeForever(recorder.callback).disposed(by: bag)
    }
    recorder.expect([0, 0])

    bag = nil
    live.set(1)
    recorder.expectNothing("the bag cancelled its observers when it was released")
    #expect(await eventually { !live.hasObservers })
  }

  @Test func disposeCancelsNowAndKeepsOtherObservers() {
    let live = MutableLiveData(0)
    let bagged = DeliveryRecorder<Int>()
    let free = DeliveryRecorder<Int>()
    let bag = DisposeBag()
    live.observeForever(bagged.callback).disposed(by: bag)
    live.observeForever(free.callback)
    bagged.expect([0])
    free.expect([0])

    bag.dispose()
    live.set(1)
    bagged.expectNothing()
    free.expect([1])
  }

  @Test func autoCancelCancelsWhenTheScopeDeactivates() async {
    let live = MutableLiveData(0)
    let scope = ScopeLifecycle()
    scope.activate()
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback).autoCancel(scope)
    recorder.expect([0])
    live.set(1)
    recorder.expect([1])

    scope.deactivate()
    live.set(2)
    scope.activate()
    live.set(3)
    recorder.expectNothing("cancelled for good at the first state in .notActive")
    #expect(await eventually { !live.hasObservers })
  }

  @Test func autoCancelCancelsAtOnceWhenTheScopeIsAlreadyInAGivenState() {
    let live = MutableLiveData(0)
    let owner = ScopedOwner()
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback).autoCancel(owner)
    recorder.expect([0])
    live.set(1)
    recorder.expectNothing("an initialized scope is in .notActive: cancelled immediately")
  }

  @Test func autoCancelHonoursTheGivenStates() async {
    let live = MutableLiveData(0)
    var owner: ScopedOwner? = ScopedOwner()
    owner?.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    if let owner {
      live.observeForever(recorder.callback).autoCancel(owner, when: .deinitialized)
    }
    recorder.expect([0])
    owner?.scopeLifecycle.deactivate()
    live.set(1)
    recorder.expect([1], "still observing: .inactive is not among the states")

    owner = nil
    #expect(await eventually { !live.hasObservers }, "cancelled when the scope reached .deinitialized")
    live.set(2)
    recorder.expectNothing()
  }
}
