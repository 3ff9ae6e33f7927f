import Foundation
import PLDTestSupport
import PersistentLiveDataTesting
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

extension Persistence {
  /// `observeVersioned(owner:_:)` and `observeVersionedForever(_:)`: each delivery is one version — its
  /// value, its number and its commit time, exactly as `history()` stores them — under the rules of
  /// `observe(owner:_:)`.
  ///
  /// The values written are `version × 10` wherever the test controls the writes, so a value paired with
  /// another version's number cannot go unnoticed.
  @MainActor @Suite struct VersionedObservationTests {
    /// The default before any write: version 0, no commit.
    static func unwritten(_ value: Int) -> Versioned<Int> {
      Versioned(version: 0, value: value, writtenAt: Date(timeIntervalSince1970: 0))
    }

    /// Every delivered version, as `history()` has it (value and `writtenAt` included).
    func expectStored(
      _ delivered: [Versioned<Int>], in data: PersistentLiveData<Int>,
      sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
      let stored = Dictionary(uniqueKeysWithValues: try data.history().map { ($0.version, $0) })
      for change in delivered {
        #expect(stored[change.version] == change, "delivered \(change)", sourceLocation: sourceLocation)
      }
    }

    @Test func eachSetArrivesWithItsVersionAndCommitTime() throws {
      let folder = try TemporaryDirectory("versioned")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = count.observeVersionedForever(seen.callback)
      defer { observer.cancel() }
      seen.expect([Self.unwritten(0)], "the default at version 0, dated 1970")

      for version in 1...3 { try count.set(version * 10) }
      try count.update { $0 += 10 }  // version 4: 40
      let history = try count.history()
      #expect(history.map(\.value) == [40, 30, 20, 10])
      seen.expect(Array(history.reversed()), "synchronously on the main actor, as history stores them")
    }

    @Test func aBurstFromAnotherThreadArrivesAsTheLatestValueWithItsOwnVersion() async throws {
      let folder = try TemporaryDirectory("versioned")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = count.observeVersionedForever(receiveCurrent: false, seen.callback)
      defer { observer.cancel() }

      let failures = ErrorBox()
      let writer = RunningThreads(1) { _ in
        for version in 1...300 {
          do { try count.set(version * 10) } catch { failures.record(error) }
        }
      }
      let arrived = await eventually(timeout: .seconds(30)) {
        writer.isFinished && seen.all.last?.version == 300
      }
      let delivered = seen.takePending()
      #expect(arrived, "the latest version arrives; got \(delivered.last.map { "\($0)" } ?? "nothing")")
      #expect(failures.errors.isEmpty)
      #expect(delivered.allSatisfy { $0.value == Int($0.version) * 10 }, "value and version pair up")
      #expect(
        zip(delivered, delivered.dropFirst()).allSatisfy { $0.version < $1.version },
        "coalesced, in order, never twice: \(delivered.map(\.version))")
      try expectStored(delivered, in: count)
    }

    /// A write made off the main actor while a dispatch runs changes memory after the dispatch read the
    /// value it hands out: reading `version` beside that value would pair the old value with the new
    /// version.
    @Test func aWriteMadeElsewhereDuringADeliveryIsNeverPairedWithTheOlderValue() async throws {
      let folder = try TemporaryDirectory("versioned")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      var plain: [Int] = []
      let writer = count.observeForever(receiveCurrent: false) { value in
        plain.append(value)
        if value == 10 { Self.setElsewhere(count, 20) }  // version 2, delivered later on the main actor
      }
      defer { writer.cancel() }
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = count.observeVersionedForever(receiveCurrent: false, seen.callback)
      defer { observer.cancel() }

      try count.set(10)
      #expect(count.version == 2 && plain == [10])
      #expect(await eventually { plain == [10, 20] }, "the scheduled delivery of version 2 ran")
      let delivered = seen.takePending()
      #expect(delivered.allSatisfy { $0.value == Int($0.version) * 10 }, "\(delivered)")
      #expect(delivered.last?.version == 2, "the newest version, with its own value: \(delivered)")
      #expect(
        zip(delivered, delivered.dropFirst()).allSatisfy { $0.version < $1.version },
        "each version at most once: \(delivered.map(\.version))")
      try expectStored(delivered, in: count)
    }

    /// Writes from no isolation: memory moves now, the delivery is scheduled on the main actor.
    nonisolated static func setElsewhere(_ data: PersistentLiveData<Int>, _ value: Int) {
      try? data.set(value)
    }

    @Test func rollbackResetAndUpdateArriveWithTheVersionsTheyWrote() throws {
      let store = try PersistentStore(path: TemporaryDirectory("versioned").path("store.db"))
      let theme = try store.liveData("theme", default: 0)
      try theme.set(10)
      try theme.set(20)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = theme.observeVersionedForever(receiveCurrent: false, seen.callback)
      defer { observer.cancel() }

      try theme.rollback(to: 1)  // version 3: 10
      try theme.reset()  // version 4: the default
      try theme.update { $0 += 50 }  // version 5: 50
      let history = try theme.history(limit: 3)
      #expect(history.map(\.version) == [5, 4, 3])
      #expect(history.map(\.value) == [50, 0, 10])
      seen.expect(Array(history.reversed()))
    }

    @Test func aRemovedKeyArrivesAsItsDefaultAtTheRemovalsVersion() async throws {
      let store = try PersistentStore(path: TemporaryDirectory("versioned").path("store.db"))
      let session = try store.liveData("session", default: -1)
      for version in 1...3 { try session.set(version * 10) }
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = session.observeVersionedForever(receiveCurrent: false, seen.callback)
      defer { observer.cancel() }

      let before = Date()
      try store.removeKey("session")
      let after = Date()
      #expect(await eventually { seen.count == 1 }, "the removal is delivered on the main actor")
      let removal = try #require(seen.takePending().first)
      #expect(removal.version == 4 && removal.value == -1, "the default, at the removal's version")
      #expect(removal.writtenAt.timeIntervalSince(before) > -0.001)
      #expect(after.timeIntervalSince(removal.writtenAt) > -0.001, "applied right after the commit")

      try session.set(50)  // continues above the removal
      seen.expect(try session.history())
    }

    @Test func anotherProcessesWriteArrivesWithTheVersionAndTimeItCommitted() async throws {
      let folder = try TemporaryDirectory("versioned")
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      let counter = try store.liveData("counter", default: 0)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = counter.observeVersionedForever(receiveCurrent: false, seen.callback)
      defer { observer.cancel() }

      let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
      #expect(child.readLine() == "ack 1")
      child.wait()
      #expect(await eventually { seen.count == 1 }, "another process's write reaches the main actor")
      let written = try #require(try counter.history().first)
      #expect(written.version == 1 && written.value == 42)
      seen.expect([written], "with the time the other process committed it")
    }

    @Test func aValueRestoredFromTheFileArrivesWithItsStoredCommitTime() throws {
      let folder = try TemporaryDirectory("versioned")
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let count = try store.liveData("count", default: 0)
        for version in 1...2 { try count.set(version * 10) }
        let removed = try store.liveData("removed", default: 7)
        try removed.set(1)
        try store.removeKey("removed")
        try store.close()
      }
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = count.observeVersionedForever(seen.callback)
      defer { observer.cancel() }
      seen.expect([try #require(try count.history().first)], "read from the file: version 2, as stored")

      // A removal has no row: a key found removed when the live value is made has no known time.
      let removed = try store.liveData("removed", default: 7)
      let removal = DeliveryRecorder<Versioned<Int>>()
      let removalObserver = removed.observeVersionedForever(removal.callback)
      defer { removalObserver.cancel() }
      removal.expect([Versioned(version: 2, value: 7, writtenAt: Date(timeIntervalSince1970: 0))])
    }

    @Test func anInactiveOwnerGetsNothingThenOnlyTheLatestVersionWhenActiveAgain() throws {
      let store = try PersistentStore(path: TemporaryDirectory("versioned").path("store.db"))
      let title = try store.liveData("title", default: 0)
      let owner = TestLifecycleOwner()
      let seen = DeliveryRecorder<Versioned<Int>>()
      title.observeVersioned(owner: owner) { (change: Versioned<Int>) in seen.record(change) }
      seen.expectNothing("not delivered before the owner is active")

      owner.activate()
      seen.expect([Self.unwritten(0)])
      try title.set(10)
      seen.expect(try title.history(limit: 1))
      owner.deactivate()
      for version in 2...4 { try title.set(version * 10) }
      seen.expectNothing("nothing while inactive")
      owner.activate()
      seen.expect(try title.history(limit: 1), "only the latest, version 4, with its own time")
      owner.deactivate()
      owner.activate()
      seen.expectNothing("a version is delivered once")
      owner.destroy()
    }

    @Test func theOwnerIsPassedToTheCallbackAndItsDestructionRemovesTheObserver() throws {
      let store = try PersistentStore(path: TemporaryDirectory("versioned").path("store.db"))
      let title = try store.liveData("title", default: 0)
      let owner = TestLifecycleOwner()
      owner.activate()
      let ownerID = ObjectIdentifier(owner)
      let seen = DeliveryRecorder<Versioned<Int>>()
      title.observeVersioned(owner: owner, receiveCurrent: false) { passed, change in
        #expect(ObjectIdentifier(passed) == ownerID)
        seen.record(change)
      }
      seen.expectNothing("receiveCurrent: false, registered while active")
      try title.set(10)
      seen.expect(try title.history(limit: 1))

      owner.destroy()
      #expect(!title.hasObservers, "removed when the owner's scope is deinitialized")
      try title.set(20)
      seen.expectNothing()
    }

    @Test func theReturnedObserverCanBeRemovedOrCancelled() async throws {
      let store = try PersistentStore.inMemory()
      let count = try store.liveData("count", default: 0)
      let seen = DeliveryRecorder<Versioned<Int>>()
      let removed = count.observeVersionedForever(receiveCurrent: false, seen.callback)
      #expect(count.remove(observer: removed))
      let cancelled = count.observeVersioned(owner: store, receiveCurrent: false, seen.callback)
      cancelled.cancel()
      try count.set(10)
      seen.expectNothing()
      #expect(await eventually { !count.hasObservers })
    }

    /// The path a server backend takes: a version whose commit time is not in memory is not delivered
    /// until the time has been fetched — then once, and to an owner that was inactive meanwhile when it is
    /// active again.
    @Test func aVersionWhoseTimeMustBeFetchedArrivesOnceTheTimeIsKnown() async throws {
      let (release, released) = AsyncStream<Void>.makeStream()
      let fetchedTime = Date(timeIntervalSince1970: 1_700_000_000)
      let times = CommitTimes(
        source: .fetched { _ in
          for await _ in release { break }
          return (fetchedTime, nil)
        })
      let data = MutableLiveData(0)
      let owner = TestLifecycleOwner()
      owner.activate()
      let seen = DeliveryRecorder<Versioned<Int>>()
      let observer = data.registerVersioned(
        owner: owner, receiveCurrent: true, commitTimes: times, seen.callback)
      defer { observer.cancel() }
      seen.expect([Self.unwritten(0)])

      data.set(10)  // version 1: no time in memory
      seen.expectNothing("held back until its time is known")
      owner.deactivate()
      released.yield()
      #expect(await eventually { times.known(1) != nil })
      for _ in 0..<100 { await Task.yield() }
      seen.expectNothing("the owner is inactive")
      owner.activate()
      seen.expect([Versioned(version: 1, value: 10, writtenAt: fetchedTime)])

      times.record(2, writtenAt: fetchedTime)
      data.set(20)
      seen.expect([Versioned(version: 2, value: 20, writtenAt: fetchedTime)], "known: synchronous")
      owner.deactivate()
      owner.activate()
      seen.expectNothing()
      owner.destroy()
    }
  }
}
