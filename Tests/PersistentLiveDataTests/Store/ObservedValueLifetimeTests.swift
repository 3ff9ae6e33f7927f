import Foundation
import PLDTestSupport
import Synchronization
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

/// A store holds its live values weakly; an observation keeps the value it observes alive, as a
/// subscription keeps its source in Combine or RxSwift: `try store.liveData("k", default: 0).observe(owner:
/// self) { … }` keeps delivering although nobody keeps the value, until the owner goes or the observer is
/// removed — and then the value is released.
@MainActor @Suite(.serialized) struct ObservedValueLifetimeTests {
  // MARK: Kept alive while observed

  @Test func aValueObservedByAPlainObjectGetsThisProcesssWritesAlthoughNobodyKeepsIt() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("a.db"))
    let owner = PlainOwner()
    let recorder = DeliveryRecorder<Int>()
    try store.liveData("todo/1", default: 0).observe(owner: owner, recorder.callback)
    recorder.expect([0])

    try store.liveData("todo/1", default: 0).set(5)
    recorder.expect([5], "the observed instance is the one the store hands out again")
    try store.liveData("todo/1", default: 0).update { $0 += 1 }
    recorder.expect([6])
    withExtendedLifetime(owner) {}
  }

  @Test func aValueObservedByAPlainObjectGetsAnotherProcesssWrite() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("shared.db")
    let store = try PersistentStore(path: path)
    let owner = PlainOwner()
    let recorder = DeliveryRecorder<Int>()
    try store.liveData("counter", default: 0).observe(owner: owner, receiveCurrent: false, recorder.callback)

    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
    #expect(child.readLine() == "ack 1")
    #expect(await child.waitOffPool() == 0)
    await recorder.waitForLast(42)
    recorder.expect([42])
    withExtendedLifetime(owner) {}
  }

  @Test func aValueObservedForeverNobodyKeepsGetsAnotherProcesssWrite() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("forever.db")
    let store = try PersistentStore(path: path)
    let recorder = DeliveryRecorder<Int>()
    let observer = try store.liveData("counter", default: 0).observeForever(
      receiveCurrent: false, recorder.callback)
    defer { observer.cancel() }

    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "7"])
    #expect(child.readLine() == "ack 1")
    #expect(await child.waitOffPool() == 0)
    await recorder.waitForLast(7)
    recorder.expect([7])
  }

  @Test func aValueObservedByALifecycleOwnerDeliversOnReactivation() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("scoped.db"))
    let screen = ScopedOwner()
    screen.scopeLifecycle.activate()
    let recorder = DeliveryRecorder<String>()
    try store.liveData("title", default: "").observe(owner: screen, recorder.callback)
    recorder.expect([""])

    screen.scopeLifecycle.deactivate()
    try store.liveData("title", default: "").set("draft")
    try store.liveData("title", default: "").set("final")
    recorder.expectNothing("inactive")
    screen.scopeLifecycle.activate()
    recorder.expect(["final"])
  }

  // MARK: Released once nobody observes

  @Test func theValueIsReleasedOnceItsPlainOwnerIsGoneEvenWithoutAWrite() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("owner.db"))
    var owner: PlainOwner? = PlainOwner()
    weak let value = try observed(store, "k", by: try #require(owner))
    #expect(value != nil)
    try await Task.sleep(for: OwnerSweep.interval * 2)
    #expect(value != nil, "kept while its owner lives")

    owner = nil
    #expect(await becomes { value == nil }, "released after its owner went, with nothing delivered")
    #expect(try store.liveData("k", default: 0).version == 0)
  }

  @Test func theValueIsReleasedWithItsLifecycleOwner() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("scope.db"))
    var screen: ScopedOwner? = ScopedOwner()
    screen?.scopeLifecycle.activate()
    weak let value = try observed(store, "k", by: try #require(screen))
    #expect(value != nil)
    screen = nil
    #expect(value == nil, "the scope's end removed the observer, and with it the hold")
  }

  @Test func theValueIsReleasedByRemoveObserver() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("remove.db"))
    let owner = PlainOwner()
    let observer = Observer<Int> { _ in }
    weak let value = try registered(store, "k") { $0.observe(owner: owner, observer: observer) }
    #expect(value != nil)
    #expect(value?.remove(observer: observer) == true)
    #expect(value == nil, "released when its last observer is removed")
    withExtendedLifetime(owner) {}
  }

  @Test func aForeverObservedValueIsReleasedWhenTheObserverIsCancelled() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("cancel.db"))
    let observer = Observer<Int> { _ in }
    weak let value = try registered(store, "k") { $0.observeForever(observer: observer) }
    try await Task.sleep(for: .milliseconds(50))
    #expect(value != nil, "a forever observer keeps it")
    observer.cancel()
    #expect(await becomes { value == nil }, "cancelled from any thread: released on the main actor")
  }

  @Test func aValueWithTwoObserversStaysUntilTheLastGoes() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("two.db"))
    let first = Observer<Int> { _ in }
    let second = Observer<Int> { _ in }
    weak let value = try registered(store, "k") {
      $0.observeForever(observer: first)
      $0.observeForever(observer: second)
    }
    value?.remove(observer: first)
    #expect(value != nil)
    value?.remove(observer: second)
    #expect(value == nil)
  }

  @Test func aValueNobodyObservesIsNotKept() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("plain.db"))
    weak let value = try store.liveData("k", default: 0)
    #expect(value == nil, "the store holds its values weakly")
  }

  // MARK: Async consumers

  @Test func aValuesConsumerKeepsItsSourceUntilCancelled() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("values.db"))
    let seen = Mutex<[Int]>([])
    let consumer = Task {
      for await number in try store.liveData("k", default: 0).values {
        seen.withLock { $0.append(number) }
      }
    }
    #expect(await becomes { seen.withLock { $0 } == [0] })
    try store.liveData("k", default: 0).set(3)
    #expect(await becomes { seen.withLock { $0 } == [0, 3] }, "the consumer's source is the live instance")

    weak let value = try store.liveData("k", default: 0)
    #expect(value != nil)
    consumer.cancel()
    _ = await consumer.result
    #expect(await becomes { value == nil }, "released once the consumer stopped")
  }

  @Test func aChangesConsumerKeepsItsSourceUntilCancelled() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("changes.db"))
    let seen = Mutex<[Int64]>([])
    let consumer = Task {
      for try await change in try store.liveData("k", default: 0).changes(since: 0) {
        seen.withLock { $0.append(change.version) }
      }
    }
    try store.liveData("k", default: 0).set(1)
    #expect(await becomes { seen.withLock { $0 } == [1] })
    weak let value = try store.liveData("k", default: 0)
    #expect(value != nil)
    #expect(value?.version == 1)
    consumer.cancel()
    _ = await consumer.result
    #expect(await becomes { value == nil })
  }

  // MARK: Helpers

  /// The instance of `key`, observed by `owner`; the caller keeps only a weak reference.
  private func observed(
    _ store: PersistentStore, _ key: String, by owner: AnyObject
  ) throws
    -> PersistentLiveData<Int>
  {
    let value = try store.liveData(key, default: 0)
    value.observe(owner: owner) { _ in }
    return value
  }

  /// The instance of `key`, after `register` added its observers; the caller keeps only a weak reference.
  private func registered(
    _ store: PersistentStore, _ key: String, _ register: (PersistentLiveData<Int>) -> Void
  ) throws -> PersistentLiveData<Int> {
    let value = try store.liveData(key, default: 0)
    register(value)
    return value
  }

  /// Polls `condition` until it holds (bounded), letting main-actor work run in between.
  private func becomes(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + mainActorWaitLimit(.seconds(5))
    while ContinuousClock.now < deadline {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
  }
}
