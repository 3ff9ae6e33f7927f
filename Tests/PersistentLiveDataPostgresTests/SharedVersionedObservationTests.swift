import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import Testing

/// `SharedLiveData.observeVersioned(owner:_:)` and `observeVersionedForever(_:)` against a real PostgreSQL
/// server: each delivery is one version — value, number and commit time as `history()` reads them — from
/// whichever replica wrote it. Values written are `version × 10`, so a value paired with another version's
/// number shows.
@MainActor
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedVersionedObservationTests {
  /// The versions an observer received, from any thread.
  final class Deliveries: Sendable {
    private let received = Locked<[Versioned<Int>]>([])
    func record(_ change: Versioned<Int>) { received.withLock { $0.append(change) } }
    var all: [Versioned<Int>] { received.withLock { $0 } }
  }

  /// Every delivered version, as the server's history has it.
  func expectStored(
    _ delivered: [Versioned<Int>], in data: SharedLiveData<Int>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let stored = Dictionary(uniqueKeysWithValues: try await data.history().map { ($0.version, $0) })
    for change in delivered {
      #expect(stored[change.version] == change, "delivered \(change)", sourceLocation: sourceLocation)
    }
  }

  @Test func thisReplicasWritesArriveBeforeTheyReturnWithTheirVersionAndTime() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("theme", default: 0)
    let seen = Deliveries()
    let observer = data.observeVersionedForever { seen.record($0) }
    #expect(seen.all == [Versioned(version: 0, value: 0, writtenAt: Date(timeIntervalSince1970: 0))])

    try await data.set(10)
    try await data.update { $0 = 20 }
    try await data.rollback(to: 1)  // version 3: 10
    let history = try await data.history()
    #expect(history.map(\.value) == [10, 20, 10])
    #expect(Array(seen.all.dropFirst()) == Array(history.reversed()), "on the main actor: before returning")
    observer.cancel()
    await a.shutDown()
  }

  @Test func anotherReplicasWritesArriveCoalescedWithTheirOwnVersionAndTime() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("counter", default: 0)
    let onB = try await b.store.liveData("counter", default: 0)
    let seen = Deliveries()
    let observer = onB.observeVersionedForever(receiveCurrent: false) { seen.record($0) }

    let writer = Task.detached {
      for version in 1...40 { try await onA.set(version * 10) }
    }
    try await writer.value
    #expect(await eventually { seen.all.last?.version == 40 }, "got \(seen.all.map(\.version))")
    let delivered = seen.all
    #expect(delivered.allSatisfy { $0.value == Int($0.version) * 10 }, "value and version pair up")
    #expect(
      zip(delivered, delivered.dropFirst()).allSatisfy { $0.version < $1.version },
      "in order, never twice: \(delivered.map(\.version))")
    try await expectStored(delivered, in: onA)
    observer.cancel()
    await a.shutDown()
    await b.shutDown()
  }

  /// The version a live value starts from, and one a transaction wrote, reached memory without their
  /// commit time: it is read from the server, then the version is delivered — once.
  @Test func versionsThatReachedMemoryWithoutTheirTimeArriveOnceItIsRead() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let written = try await a.store.liveData("limits", default: 0)
    for version in 1...3 { try await written.set(version * 10) }

    let restored = try await b.store.liveData("limits", default: 0)
    #expect(restored.version == 3)
    let seen = Deliveries()
    let observer = restored.observeVersionedForever { seen.record($0) }
    #expect(await eventually { seen.all.count == 1 }, "the restored version arrives")
    #expect(seen.all == Array(try await restored.history(limit: 1)), "with the time stored on the server")

    try await b.store.transaction { transaction in
      try transaction.set(restored, to: 99)
      try transaction.set(restored, to: 50)  // versions 4 and 5: observers hear of 5
    }
    #expect(await eventually { seen.all.count == 2 }, "the transaction's version arrives")
    for _ in 0..<50 { await Task.yield() }
    #expect(seen.all.count == 2, "once: \(seen.all)")
    #expect(seen.all.last == (try await restored.history(limit: 1)).first)
    #expect(seen.all.last?.version == 5 && seen.all.last?.value == 50)
    observer.cancel()
    await a.shutDown()
    await b.shutDown()
  }

  @Test func anInactiveOwnerGetsNothingThenTheLatestVersionWhenActiveAgain() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("title", default: 0)
    let scope = ScopeLifecycle()
    let seen = Deliveries()
    data.observeVersioned(owner: scope) { (change: Versioned<Int>) in seen.record(change) }
    #expect(seen.all.isEmpty, "nothing before the owner is active")
    scope.activate()
    #expect(seen.all.map(\.version) == [0])

    scope.deactivate()
    for version in 1...3 { try await data.set(version * 10) }
    #expect(seen.all.map(\.version) == [0], "nothing while inactive")
    scope.activate()
    #expect(Array(seen.all.dropFirst()) == Array(try await data.history(limit: 1)), "only the latest")
    scope.deactivate()
    scope.activate()
    #expect(seen.all.count == 2, "a version is delivered once")
    await a.shutDown()
  }
}
