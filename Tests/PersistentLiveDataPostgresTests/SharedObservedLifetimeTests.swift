import Foundation
import PLDTestSupport
import PersistentLiveData
import Synchronization
import Testing

@testable import PersistentLiveDataPostgres

/// A shared store, like the SQLite one, holds its live values weakly: an observation keeps the value it
/// observes alive (and so hearing of other replicas' writes) until the owner goes or the observer is
/// removed, and then releases it.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedObservedLifetimeTests {
  /// Any object that is not a lifecycle owner.
  final class Owner: Sendable {}

  @MainActor
  @Test func aValueObservedByAPlainObjectGetsAnotherReplicasWriteAlthoughNobodyKeepsIt() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let owner = Owner()
    let delivered = Mutex<[Int]>([])
    try await a.store.liveData("todo/1", default: 0).observe(owner: owner, receiveCurrent: false) { value in
      delivered.withLock { $0.append(value) }
    }

    try await b.store.liveData("todo/1", default: 0).set(4)
    #expect(await eventually { delivered.withLock { $0 } == [4] }, "another replica's write arrives")
    try await a.store.liveData("todo/1", default: 0).set(5)
    #expect(delivered.withLock { $0 } == [4, 5], "this replica's write, to the same instance")
    withExtendedLifetime(owner) {}
    await a.shutDown()
    await b.shutDown()
  }

  @MainActor
  @Test func theValueIsReleasedAfterItsOwnerGoesAndAfterRemoveObserver() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    var owner: Owner? = Owner()
    weak let byOwner = try await registered(a.store, "owned") { value in
      if let current = owner { value.observe(owner: current) { _ in } }
    }
    #expect(byOwner != nil)
    owner = nil
    #expect(await eventually { byOwner == nil }, "released after its owner went")

    let observer = Observer<Int> { _ in }
    weak let byObserver = try await registered(a.store, "removed") { $0.observeForever(observer: observer) }
    #expect(byObserver != nil)
    byObserver?.remove(observer: observer)
    #expect(byObserver == nil, "released by remove(observer:)")
    await a.shutDown()
  }

  /// The instance of `key`, after `register` added its observers; the caller keeps only a weak reference.
  @MainActor
  private func registered(
    _ store: PostgresStore, _ key: String, _ register: (SharedLiveData<Int>) -> Void
  ) async throws -> SharedLiveData<Int> {
    let value = try await store.liveData(key, default: 0)
    register(value)
    return value
  }

  @Test func aValuesConsumerKeepsItsSourceUntilCancelled() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let seen = Mutex<[Int]>([])
    let consumer = Task {
      for await number in try await a.store.liveData("feed", default: 0).values {
        seen.withLock { $0.append(number) }
      }
    }
    #expect(await eventually { seen.withLock { $0 } == [0] })
    try await b.store.liveData("feed", default: 0).set(9)
    #expect(
      await eventually { seen.withLock { $0 }.last == 9 }, "another replica's write reaches the consumer")
    consumer.cancel()
    _ = await consumer.result
    await a.shutDown()
    await b.shutDown()
  }
}
