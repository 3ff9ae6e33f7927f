import Testing

@testable import PersistentLiveData

/// Owner, LiveData and observer are all released once the test lets go of them.
@MainActor @Suite struct RetainCycleTests {
  @Test func scopedOwnerLiveDataAndOwnerPassingObserverAreReleased() async {
    var owner: ScopedOwner? = ScopedOwner()
    var live: MutableLiveData<Int>? = MutableLiveData(0)
    owner?.scopeLifecycle.activate()
    var observer: Observer<Int>?
    if let owner, let live {
      // The closure uses the owner it is handed: nothing captures it strongly.
      observer = live.observe(owner: owner) { owner, value in owner.received.append(value) }
    }
    live?.set(1)
    #expect(owner?.received == [0, 1])
    weak let weakOwner = owner
    weak let weakLive = live
    weak let weakObserver = observer

    owner = nil
    live = nil
    observer = nil
    #expect(await eventually { weakOwner == nil && weakLive == nil && weakObserver == nil })
    #expect(weakOwner == nil, "owner leaked")
    #expect(weakLive == nil, "LiveData leaked")
    #expect(weakObserver == nil, "observer leaked")
  }

  @Test func plainOwnerLiveDataAndOwnerPassingObserverAreReleased() async {
    var owner: PlainOwner? = PlainOwner()
    var live: MutableLiveData<Int>? = MutableLiveData(0)
    var observer: Observer<Int>?
    if let owner, let live {
      observer = live.observe(owner: owner) { owner, value in owner.received.append(value) }
    }
    #expect(owner?.received == [0])
    weak let weakOwner = owner
    weak let weakLive = live
    weak let weakObserver = observer

    owner = nil
    live = nil
    observer = nil
    #expect(await eventually { weakOwner == nil && weakLive == nil && weakObserver == nil })
    #expect(weakOwner == nil, "owner leaked")
    #expect(weakLive == nil, "LiveData leaked")
    #expect(weakObserver == nil, "observer leaked")
  }

  @Test func ownerIsReleasedWhileLiveDataLivesOn() {
    let live = MutableLiveData(0)
    var owner: ScopedOwner? = ScopedOwner()
    owner?.scopeLifecycle.activate()
    if let owner { live.observe(owner: owner) { owner, value in owner.received.append(value) } }
    weak let weakOwner = owner
    owner = nil
    #expect(weakOwner == nil, "the LiveData does not keep the owner alive")
  }

  @Test func foreverObserverAndLiveDataAreReleasedTogether() async {
    var live: MutableLiveData<Int>? = MutableLiveData(0)
    var observer: Observer<Int>? = Observer<Int> { _ in }
    if let live, let observer { live.observeForever(observer: observer) }
    weak let weakLive = live
    weak let weakObserver = observer
    live = nil
    observer = nil
    #expect(await eventually { weakLive == nil && weakObserver == nil })
    #expect(weakLive == nil, "LiveData leaked")
    #expect(weakObserver == nil, "observer leaked")
  }

  @Test func mappedLiveDataAndSourceAreReleasedWhileObserved() async {
    var source: MutableLiveData<Int>? = MutableLiveData(1)
    var mapped: LiveData<Int>? = source?.map { $0 + 1 }
    var observer: Observer<Int>? = mapped?.observeForever { _ in }
    #expect(source?.hasObservers == true)
    weak let weakSource = source
    weak let weakMapped = mapped
    weak let weakObserver = observer
    source = nil
    mapped = nil
    observer = nil
    #expect(await eventually { weakSource == nil && weakMapped == nil && weakObserver == nil })
    #expect(weakSource == nil, "source leaked")
    #expect(weakMapped == nil, "mapped LiveData leaked")
    #expect(weakObserver == nil, "observer leaked")
  }

  @Test func mediatorAndSourceAreReleasedAfterObserverIsRemoved() async {
    var source: MutableLiveData<Int>? = MutableLiveData(1)
    var mediator: MediatorLiveData<Int>? = MediatorLiveData(0)
    if let source, let mediator {
      mediator.addSource(source) { [weak mediator] value in mediator?.set(value) }
      let observer = mediator.observeForever { _ in }
      mediator.remove(observer: observer)
    }
    weak let weakSource = source
    weak let weakMediator = mediator
    source = nil
    mediator = nil
    #expect(await eventually { weakSource == nil && weakMediator == nil })
    #expect(weakSource == nil, "source leaked")
    #expect(weakMediator == nil, "mediator leaked")
  }

  @Test func eventAndOwnerAreReleased() async {
    var owner: ScopedOwner? = ScopedOwner()
    var event: FutureEvent<Int>? = FutureEvent<Int>()
    owner?.scopeLifecycle.activate()
    if let owner, let event { event.observe(owner: owner) { _ in } }
    weak let weakOwner = owner
    weak let weakEvent = event
    owner = nil
    event = nil
    #expect(await eventually { weakOwner == nil && weakEvent == nil })
    #expect(weakOwner == nil, "owner leaked")
    #expect(weakEvent == nil, "event leaked")
  }
}
