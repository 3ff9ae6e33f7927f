import Testing

@testable import PersistentLiveData

/// A derived LiveData (`map`, `distinctUntilChanged`, `switchMap`, a `MediatorLiveData` with sources) that
/// nobody keeps a reference to lives exactly as long as it has observers whose owners are alive, as on
/// Android, where the source holds the mediator's observer and the owner's lifecycle holds the observer.
@MainActor @Suite struct DerivedChainLifetimeTests {
  // MARK: Observed chains keep delivering

  @Test func distinctChainObservedByAScopedOwnerKeepsDeliveringUntilTheOwnerIsGone() {
    let query = MutableLiveData("")
    var screen: ScopedOwner? = ScopedOwner()
    screen?.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<String>()
    weak let distinct = observed(query.distinctUntilChanged(), by: screen, recorder)
    recorder.expect([""])

    query.set("swift")
    recorder.expect(["swift"], "the chain is alive although nobody references it")
    query.set("swift")
    recorder.expectNothing("equal to the previous value")
    #expect(distinct != nil)

    screen = nil
    #expect(distinct == nil, "released with its owner")
    query.set("linux")
    recorder.expectNothing()
    #expect(!query.hasObservers, "the source no longer holds the chain")
  }

  @Test func chainOfAnInactiveOwnerSurvivesAndDeliversTheLatestValueOnReactivation() {
    let query = MutableLiveData(1)
    let screen = ScopedOwner()
    screen.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<String>()
    weak let label = observed(query.map { "#\($0)" }, by: screen, recorder)
    recorder.expect(["#1"])

    screen.scopeLifecycle.deactivate()
    #expect(!query.hasObservers, "an inactive chain does not observe its source")
    query.set(2)
    query.set(3)
    recorder.expectNothing()
    #expect(label != nil, "the owner's lifecycle keeps the inactive chain")

    screen.scopeLifecycle.activate()
    recorder.expect(["#3"])
    query.set(4)
    recorder.expect(["#4"])
  }

  @Test func foreverObservedMapKeepsDeliveringUntilTheObserverIsRemoved() {
    let count = MutableLiveData(1)
    let recorder = DeliveryRecorder<Int>()
    var observer: Observer<Int>?
    weak let doubled = observedForever(count.map { $0 * 2 }, recorder, observer: &observer)
    recorder.expect([2])

    count.set(2)
    recorder.expect([4])
    #expect(doubled != nil)

    if let observer { doubled?.remove(observer: observer) }
    #expect(doubled == nil, "released once its last observer is removed")
    count.set(3)
    recorder.expectNothing()
    #expect(!count.hasObservers)
  }

  @Test func foreverObservedChainIsReleasedAfterItsObserverIsCancelled() async {
    let count = MutableLiveData(1)
    let recorder = DeliveryRecorder<Int>()
    var observer: Observer<Int>?
    weak let chain = observedForever(
      count.map { $0 + 1 }.distinctUntilChanged(), recorder, observer: &observer)
    recorder.expect([2])
    count.set(5)
    recorder.expect([6])

    observer?.cancel()
    count.set(7)
    recorder.expectNothing("no callback after cancel")
    #expect(await eventually { chain == nil }, "released once the cancellation is processed")
    #expect(await eventually { !count.hasObservers })
  }

  @Test func switchMapChainObservedByAScopedOwnerKeepsFollowingItsBacking() {
    let selection = MutableLiveData(0)
    let backings = [MutableLiveData("a"), MutableLiveData("b")]
    var screen: ScopedOwner? = ScopedOwner()
    screen?.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<String?>()
    weak let selected = observed(selection.switchMap { backings[$0] }, by: screen, recorder)
    recorder.expect(["a"])

    backings[0].set("a2")
    recorder.expect(["a2"])
    selection.set(1)
    recorder.expect(["b"])
    backings[1].set("b2")
    recorder.expect(["b2"])
    backings[0].set("ignored")
    recorder.expectNothing()

    screen = nil
    #expect(selected == nil)
    #expect(!selection.hasObservers && !backings[0].hasObservers && !backings[1].hasObservers)
  }

  @Test func mediatorWithSourcesObservedByAPlainOwnerIsReleasedAfterTheOwner() {
    let first = MutableLiveData("Ada")
    let last = MutableLiveData("Lovelace")
    var owner: PlainOwner? = PlainOwner()
    let recorder = DeliveryRecorder<String>()
    weak let fullName = observed(fullNameMediator(first, last), by: owner, recorder)
    recorder.expect(["Ada Lovelace", "Ada Lovelace"], "each source delivers its current value when plugged")

    first.set("Augusta")
    recorder.expect(["Augusta Lovelace"])
    #expect(fullName != nil)

    owner = nil
    // A plain object cannot report its end: the chain notices it at its next delivery.
    last.set("King")
    recorder.expectNothing()
    #expect(fullName == nil)
    #expect(!first.hasObservers && !last.hasObservers)
  }

  @Test func chainObservedByAScopedOwnerKeepsItsSourcesAlive() {
    // A root that only the chain references (as a store's value that nobody else holds) lives as long as the
    // chain: the owner's lifecycle reaches it through every mediator on the way.
    var screen: ScopedOwner? = ScopedOwner()
    screen?.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<Int>()
    var root: MutableLiveData<Int>? = MutableLiveData(1)
    weak let weakRoot = root
    if let root { observed(root.map { $0 * 10 }.distinctUntilChanged(), by: screen, recorder) }
    root = nil
    recorder.expect([10])

    weakRoot?.set(2)
    recorder.expect([20])
    screen?.scopeLifecycle.deactivate()
    weakRoot?.set(3)
    screen?.scopeLifecycle.activate()
    recorder.expect([30])
    #expect(weakRoot != nil)

    screen = nil
    #expect(weakRoot == nil, "the whole chain goes with its owner")
  }

  @Test func foreverObservedChainWhoseRootNobodyHoldsIsReleased() async {
    var root: MutableLiveData<Int>? = MutableLiveData(1)
    let recorder = DeliveryRecorder<Int>()
    var observer: Observer<Int>?
    weak let weakRoot = root
    var chain: LiveData<Int>? = root?.map { $0 + 1 }.map { $0 * 2 }
    if let data = chain { observer = data.observeForever(recorder.callback) }
    weak let weakChain = chain
    weak let weakObserver = observer
    chain = nil
    recorder.expect([4])
    #expect(weakChain != nil, "its root keeps the observed chain")

    root = nil
    observer = nil
    // Nothing can change the root any more: the whole chain is garbage, as Android's collector would find.
    #expect(await eventually { weakRoot == nil && weakChain == nil && weakObserver == nil })
  }

  // MARK: Helpers

  /// Observes `data` bound to `owner` and returns it, so that the caller keeps only a weak reference.
  @discardableResult
  private func observed<Value: Sendable & Equatable>(
    _ data: LiveData<Value>, by owner: AnyObject?, _ recorder: DeliveryRecorder<Value>
  ) -> LiveData<Value> {
    if let owner { data.observe(owner: owner, recorder.callback) }
    return data
  }

  private func observedForever<Value: Sendable & Equatable>(
    _ data: LiveData<Value>, _ recorder: DeliveryRecorder<Value>, observer: inout Observer<Value>?
  ) -> LiveData<Value> {
    observer = data.observeForever(recorder.callback)
    return data
  }

  private func fullNameMediator(
    _ first: MutableLiveData<String>, _ last: MutableLiveData<String>
  ) -> MediatorLiveData<String> {
    let fullName = MediatorLiveData("")
    let update: @MainActor (String) -> Void = { [weak fullName] _ in
      fullName?.set("\(first.value) \(last.value)")
    }
    fullName.addSource(first, onChanged: update)
    fullName.addSource(last, onChanged: update)
    return fullName
  }
}
