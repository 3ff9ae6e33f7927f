import Testing

@testable import PersistentLiveData

/// 10,000 observers on one LiveData: correctness only (timing belongs to the benchmark target).
@MainActor @Suite struct ScaleTests {
  static let count = 10_000

  @Test func tenThousandObserversEachReceiveOneSetOnceAndAreRemoved() {
    let live = MutableLiveData(0)
    let counts = Counts(Self.count)
    let observers = (0..<Self.count).map { index in
      live.observeForever(receiveCurrent: false) { value in counts.record(index, value) }
    }
    #expect(live.hasObservers)
    #expect(counts.total == 0)

    live.set(1)
    #expect(counts.total == Self.count)
    #expect(counts.everyIndex(receivedExactly: [1]), "each observer got the value exactly once")
    #expect(counts.order == Array(0..<Self.count), "in registration order")

    for observer in observers {
      #expect(live.remove(observer: observer))
    }
    #expect(!live.hasObservers)
    live.set(2)
    #expect(counts.total == Self.count, "removed observers get nothing")
  }

  @Test func tenThousandObserversRemovedByCancel() async {
    let live = CountingLiveData(0)
    let counts = Counts(Self.count)
    let observers = (0..<Self.count).map { index in
      live.observeForever { value in counts.record(index, value) }
    }
    #expect(counts.everyIndex(receivedExactly: [0]))
    live.set(1)
    #expect(counts.everyIndex(receivedExactly: [0, 1]))

    for observer in observers { observer.cancel() }
    live.set(2)
    #expect(counts.everyIndex(receivedExactly: [0, 1]), "cancelled observers get nothing")
    #expect(await eventually(timeout: .seconds(30)) { !live.hasObservers })
    #expect(live.activeCalls == 1)
    #expect(live.inactiveCalls == 1)
  }

  @Test func removingHalfTheObserversKeepsTheOtherHalfInOrder() {
    let live = MutableLiveData(0)
    let counts = Counts(Self.count)
    let observers = (0..<Self.count).map { index in
      live.observeForever(receiveCurrent: false) { value in counts.record(index, value) }
    }
    for (index, observer) in observers.enumerated() where index.isMultiple(of: 2) {
      live.remove(observer: observer)
    }
    live.set(1)
    let odd = Array(stride(from: 1, to: Self.count, by: 2))
    #expect(counts.order == odd)
    #expect(live.hasObservers)
    for observer in observers { observer.cancel() }
  }

  @Test func tenThousandOwnerBoundObserversFollowTheirScope() async {
    let live = MutableLiveData(0)
    var owner: ScopedOwner? = ScopedOwner()
    let counts = Counts(Self.count)
    if let owner {
      for index in 0..<Self.count {
        live.observe(owner: owner) { value in counts.record(index, value) }
      }
      owner.scopeLifecycle.activate()
    }
    #expect(counts.everyIndex(receivedExactly: [0]))
    owner?.scopeLifecycle.deactivate()
    live.set(1)
    owner?.scopeLifecycle.activate()
    #expect(counts.everyIndex(receivedExactly: [0, 1]))

    owner = nil
    #expect(await eventually(timeout: .seconds(30)) { !live.hasObservers })
    live.set(2)
    #expect(counts.everyIndex(receivedExactly: [0, 1]))
  }
}

/// Per-observer delivery log for the scale tests (a recorder per observer would dominate the cost).
@MainActor private final class Counts {
  private var received: [[Int]]
  private(set) var order: [Int] = []
  private(set) var total = 0

  init(_ count: Int) { received = Array(repeating: [], count: count) }

  func record(_ index: Int, _ value: Int) {
    received[index].append(value)
    order.append(index)
    total += 1
  }

  func everyIndex(receivedExactly values: [Int]) -> Bool {
    received.allSatisfy { $0 == values }
  }
}
