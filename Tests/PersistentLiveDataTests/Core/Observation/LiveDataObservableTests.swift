import Foundation
import Observation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataCore

/// Counts the `onChange` calls of `withObservationTracking`, and what `value` was when each ran.
///
/// Each call must run on the main actor: `MainActor.assumeIsolated` stops the test run otherwise.
final class ChangeProbe<Value: Sendable>: Sendable {
  private let seen = Locked<[Value]>([])

  /// How many times `onChange` ran.
  var count: Int { seen.value.count }
  /// The LiveData's value at each `onChange`.
  var values: [Value] { seen.value }

  /// Reads `data.value` inside `withObservationTracking`; its `onChange` records into this probe.
  func track(_ data: LiveData<Value>) {
    withObservationTracking {
      _ = data.value
    } onChange: {
      MainActor.assumeIsolated {
        self.seen.withLock { $0.append(data.value) }
      }
    }
  }
}

/// `LiveData` is `Observable`: reading `value` or `version` inside `withObservationTracking` registers
/// interest, and the next delivered version — the main-actor dispatch that hands it to observers — calls
/// `onChange` once, on the main actor. Observers of the LiveData are unaffected.
@MainActor @Suite struct LiveDataObservableTests {
  @Test func aVersionSetOnTheMainActorFiresOnChangeOnceBeforeSetReturns() {
    let live = MutableLiveData(0)
    let probe = ChangeProbe<Int>()
    probe.track(live)
    #expect(probe.count == 0, "reading registers interest, it does not fire")

    live.set(1)
    #expect(probe.values == [1], "fired during the synchronous delivery, after value changed")
    live.set(2)
    #expect(probe.values == [1], "onChange is one-shot: tracking again is the reader's job")

    probe.track(live)
    live.update { $0 += 1 }
    #expect(probe.values == [1, 3])
  }

  @Test func readingVersionOrIsInitializedRegistersInterestToo() {
    let live = MutableLiveData<Int?>()
    let fired = Locked(0)
    withObservationTracking {
      _ = live.isInitialized
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    live.set(5)
    #expect(fired.value == 1)

    withObservationTracking {
      _ = live.version
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    live.set(nil)
    #expect(fired.value == 2)
  }

  @Test func aDispatchThatDeliversNothingNewDoesNotFire() {
    let live = MutableLiveData(0)
    live.set(1)
    let probe = ChangeProbe<Int>()
    probe.track(live)

    live.dispatch()
    live.dispatch()
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)  // delivers the current version to it
    recorder.expect([1])
    live.dispatch(initiator: observer)
    #expect(probe.count == 0, "no dispatch delivered a version newer than the one that was read")

    live.set(2)
    recorder.expect([2])
    #expect(probe.values == [2])
  }

  @Test func observersAreCalledExactlyAsWithoutObservation() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    let probe = ChangeProbe<Int>()
    probe.track(live)

    live.set(1)
    recorder.expect([1])
    #expect(probe.values == [1])
    live.set(2)
    recorder.expect([2])
    live.dispatch()
    recorder.expectNothing()
  }

  @Test func anOnChangeThatWritesLeavesObserversOnTheNewestVersionOnce() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    withObservationTracking {
      _ = live.value
    } onChange: {
      MainActor.assumeIsolated {
        if live.value == 1 { live.set(10) }
      }
    }
    live.set(1)
    recorder.expect([10], "the write inside onChange restarted the dispatch before any observer ran")
    #expect(live.version == 2)
  }

  @Test func aWriteFromAnotherThreadFiresWhenItsMainActorDeliveryRuns() async {
    let live = MutableLiveData(0)
    let probe = ChangeProbe<Int>()
    probe.track(live)

    // The main actor is blocked while the thread writes: nothing may fire on the writer's thread.
    #expect(
      runOnThreadsBlocking(1) { _ in
        for next in 1...3 { live.set(next) }
      })
    #expect(live.value == 3, "value moved before set returned")
    #expect(probe.count == 0, "not fired before the main-actor delivery")

    #expect(await eventually { probe.count == 1 })
    #expect(probe.values == [3], "one delivery, coalesced to the latest version")
  }

  @Test func aWriteFromADetachedTaskFiresOnTheMainActorWithObserversAround() async {
    let live = MutableLiveData("a")
    let recorder = DeliveryRecorder<String>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    let probe = ChangeProbe<String>()
    probe.track(live)

    await Task.detached { live.set("b") }.value
    await recorder.waitForLast("b")
    recorder.expect(["b"])
    #expect(probe.values == ["b"])
  }

  /// A value nobody has read or observed wakes nobody: its writes off the main actor schedule no
  /// main-actor dispatch. The first read or observer turns the deliveries on, and loses nothing.
  @Test func writesToAValueNobodyReadOrObservedScheduleNoMainActorDelivery() async {
    let live = MutableLiveData(0)
    await Task.detached { for next in 1...3 { live.set(next) } }.value
    #expect(!live.storage.withLock { $0.dispatchScheduled }, "nobody to deliver to: nothing scheduled")

    // A tracked read from any thread turns the deliveries on; the next write fires onChange.
    let probe = ChangeProbe<Int>()
    await Task.detached { probe.track(live) }.value
    await Task.detached { live.set(4) }.value
    #expect(await eventually { probe.count == 1 })
    #expect(probe.values == [4])
  }

  @Test func anObserverRegisteredAfterUnwatchedWritesGetsTheCurrentValueThenEveryLaterOne() async {
    let live = MutableLiveData("a")
    await Task.detached { live.set("b") }.value
    let recorder = DeliveryRecorder<String>()
    live.observeForever(recorder.callback)
    recorder.expect(["b"])  // the current version, delivered by the registration

    await Task.detached { live.set("c") }.value
    await recorder.waitForLast("c")
    recorder.expect(["c"])
    #expect(recorder.all == ["b", "c"])

    // Registered without the current value: the unwatched write before it is not delivered, the
    // write after it is.
    let quiet = MutableLiveData(0)
    await Task.detached { quiet.set(1) }.value
    let later = DeliveryRecorder<Int>()
    quiet.observeForever(receiveCurrent: false, later.callback)
    await Task.detached { quiet.set(2) }.value
    await later.waitForLast(2)
    later.expect([2])
  }

  @Test func readingValueOffTheMainActorRegistersInterest() async {
    let live = MutableLiveData(0)
    let probe = ChangeProbe<Int>()
    await Task.detached { probe.track(live) }.value
    #expect(probe.count == 0)

    live.set(1)
    #expect(probe.values == [1], "onChange runs in the main-actor delivery, wherever the read happened")
  }

  @Test func concurrentReadsWhileWritingDoNotCrash() async {
    let live = MutableLiveData(0)
    let trackers = ChangeProbe<Int>()
    #expect(
      await runOnThreads(4) { index in
        for step in 0..<2_000 {
          if index == 0 {
            live.set(step)
          } else {
            trackers.track(live)
          }
        }
      })
    #expect(await eventually { live.version == 2_000 })
  }

  @Test func aMediatorFiresWhenItsSourceIsDelivered() {
    let first = MutableLiveData("Ada")
    let last = MutableLiveData("Lovelace")
    let fullName = MediatorLiveData("")
    let combine: @MainActor (String) -> Void = { [weak fullName] _ in
      fullName?.set("\(first.value) \(last.value)")
    }
    fullName.addSource(first, onChanged: combine)
    fullName.addSource(last, onChanged: combine)
    let recorder = DeliveryRecorder<String>()
    fullName.observeForever(recorder.callback)
    // Activation plugs both sources, and each delivers its current value: two versions, equal values.
    recorder.expect(["Ada Lovelace", "Ada Lovelace"])

    let probe = ChangeProbe<String>()
    probe.track(fullName)
    last.set("Byron")
    #expect(probe.values == ["Ada Byron"])
    recorder.expect(["Ada Byron"])
  }

  @Test func anObservedMapFiresAndAnUnobservedOneIsNotRecomputed() {
    let source = MutableLiveData(1)
    let doubled = source.map { $0 * 2 }
    let unobserved = source.map { $0 * 3 }
    let recorder = DeliveryRecorder<Int>()
    doubled.observeForever(recorder.callback)
    recorder.expect([2])

    let probe = ChangeProbe<Int>()
    probe.track(doubled)
    let unobservedProbe = ChangeProbe<Int>()
    unobservedProbe.track(unobserved)

    source.set(5)
    #expect(probe.values == [10])
    recorder.expect([10])
    // A derived LiveData runs only while it has active observers (see MediatorLiveData).
    #expect(unobservedProbe.count == 0)
    #expect(unobserved.value == 3)
  }

  @Test func aPersistentValueInAnInMemoryStoreFiresOnEachDeliveredCommit() async throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 0)
    let probe = ChangeProbe<Int>()
    probe.track(count)

    try count.set(1)
    #expect(probe.values == [1])

    probe.track(count)
    try await Task.detached { try count.set(2) }.value
    #expect(count.version == 2)
    #expect(await eventually { probe.count == 2 })
    #expect(probe.values == [1, 2])

    probe.track(count)
    try store.transaction {
      try count.set(3)
      try count.set(4)
    }
    #expect(probe.values == [1, 2, 4], "one onChange for the transaction, after its commit")
    try store.close()
  }

  @Test func aPersistentValueInAFileStoreFiresForAnotherProcessesWriteOnly() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("shared.db")
    let store = try PersistentStore(path: path)
    let counter = try store.liveData("counter", default: 0)
    let other = try store.liveData("other", default: 0)
    try counter.set(1)
    try other.set(1)
    let counterProbe = ChangeProbe<Int>()
    counterProbe.track(counter)
    let otherProbe = ChangeProbe<Int>()
    otherProbe.track(other)

    // The store reloads every live key when another connection commits: `other` is read again at the
    // same version, which must not count as a change.
    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
    #expect(child.readLine() == "ack 2")
    child.wait()
    #expect(await eventually { counterProbe.count == 1 })
    #expect(counterProbe.values == [42])
    #expect(otherProbe.count == 0)
    #expect(other.version == 1)
    try store.close()
  }
}
