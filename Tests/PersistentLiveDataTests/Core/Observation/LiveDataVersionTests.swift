import Foundation
import Testing

@testable import PersistentLiveData

/// Versions: initialization, one bump per set, and at-most-once delivery per version.
@MainActor @Suite struct LiveDataVersionTests {
  @Test func initWithValueIsInitializedAtVersionZero() {
    let live = MutableLiveData(42)
    #expect(live.isInitialized)
    #expect(live.version == 0)
    #expect(live.value == 42)
  }

  @Test func initWithoutValueIsNotInitializedAtVersionMinusOne() {
    let live = MutableLiveData<Int?>()
    #expect(!live.isInitialized)
    #expect(live.version == -1)
    #expect(live.value == nil)
  }

  @Test func uninitializedLiveDataDeliversNothingUntilFirstSet() {
    let live = MutableLiveData<Int?>()
    let recorder = DeliveryRecorder<Int?>()
    live.observeForever(recorder.callback)
    live.dispatch()
    recorder.expectNothing("an uninitialized LiveData has no version to deliver")

    live.set(7)
    recorder.expect([7])
    #expect(live.isInitialized)
    #expect(live.version == 0)
  }

  @Test func firstSetOfNilInitializesAndIsDelivered() {
    let live = MutableLiveData<Int?>()
    let recorder = DeliveryRecorder<Int?>()
    live.observeForever(recorder.callback)
    live.set(nil)
    #expect(live.isInitialized)
    #expect(live.version == 0)
    recorder.expect([nil])
  }

  @Test func everySetBumpsTheVersionEvenForEqualValues() {
    let live = MutableLiveData(5)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([5])

    live.set(5)
    #expect(live.version == 1)
    live.set(5)
    #expect(live.version == 2)
    recorder.expect([5, 5], "equal values are new versions and are delivered")
  }

  @Test func updateBumpsTheVersionOnceAndReturnsTheNewValue() {
    let live = MutableLiveData(1)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([1])

    let result = live.update { $0 += 10 }
    #expect(result == 11)
    #expect(live.value == 11)
    #expect(live.version == 1)
    recorder.expect([11])
  }

  @Test func repeatedDispatchIsIdempotent() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(recorder.callback)
    recorder.expect([0])

    live.dispatch()
    live.dispatch()
    live.dispatch(initiator: observer)
    live.dispatch(initiator: observer)
    recorder.expectNothing("a version reaches an observer at most once")

    live.set(1)
    live.dispatch()
    live.dispatch(initiator: observer)
    recorder.expect([1])
  }

  @Test func receiveCurrentFalseDeliversNothingAtRegistration() {
    let live = MutableLiveData(3)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    recorder.expectNothing()

    live.set(4)
    recorder.expect([4], "the value arrives through a later set")
  }

  @Test func receiveCurrentFalseValueArrivesOnceThroughLaterDispatch() {
    let live = MutableLiveData(3)
    let recorder = DeliveryRecorder<Int>()
    let observer = live.observeForever(receiveCurrent: false, recorder.callback)
    recorder.expectNothing()

    live.dispatch()
    recorder.expect([3], "dispatch() delivers the current undelivered version")
    live.dispatch()
    live.dispatch(initiator: observer)
    recorder.expectNothing("and only once")
  }

  @Test func receiveCurrentFalseValueArrivesOnceThroughDispatchToInitiator() {
    let live = MutableLiveData(3)
    let recorder = DeliveryRecorder<Int>()
    let other = DeliveryRecorder<Int>()
    live.observeForever(other.callback)
    other.expect([3])
    let observer = live.observeForever(receiveCurrent: false, recorder.callback)

    live.dispatch(initiator: observer)
    recorder.expect([3])
    other.expectNothing("dispatch(initiator:) delivers to that observer only")
    live.dispatch(initiator: observer)
    live.dispatch()
    recorder.expectNothing()
    other.expectNothing()
  }

  @Test func dispatchReachesOnlyObserversThatMissedTheVersion() {
    let live = MutableLiveData(0)
    let early = DeliveryRecorder<Int>()
    let late = DeliveryRecorder<Int>()
    live.observeForever(early.callback)
    live.observeForever(receiveCurrent: false, late.callback)
    early.expect([0])

    live.dispatch()
    early.expectNothing()
    late.expect([0])
  }

  @Test func valueAndVersionAlwaysAgreeUnderConcurrentUpdates() {
    // value.count is the number of updates applied; version starts at 0, so after the n-th update both
    // are n. A reader samples version, value, version: the value must lie between the two versions.
    let live = MutableLiveData(Counted())
    let writers = 3
    let updatesPerWriter = 2_000
    let check = ConsistencyCheck()

    let finished = runOnThreadsBlocking(writers + 1) { index in
      if index == writers {
        check.hammer(live, until: writers)
      } else {
        check.waitForReader()
        for _ in 0..<updatesPerWriter {
          live.update { $0.count += 1 }
        }
        check.writerFinished()
      }
    }

    #expect(finished)
    let violations = check.violations
    let violationCount = violations.count
    #expect(violationCount == 0, "first inconsistent reads: \(violations.prefix(5))")
    #expect(check.samples > 0)
    #expect(live.value.count == Int64(writers * updatesPerWriter))
    #expect(live.version == Int64(writers * updatesPerWriter))
  }

  @Test func valueAndVersionAlwaysAgreeUnderConcurrentSets() {
    // One writer sets count i as its i-th set, so value i belongs to version i.
    let live = MutableLiveData(Counted())
    let sets = 5_000
    let check = ConsistencyCheck()

    let finished = runOnThreadsBlocking(2) { index in
      if index == 1 {
        check.hammer(live, until: 1)
      } else {
        check.waitForReader()
        for count in 1...sets {
          live.set(Counted(count: Int64(count)))
        }
        check.writerFinished()
      }
    }

    #expect(finished)
    let violations = check.violations
    let violationCount = violations.count
    #expect(violationCount == 0, "first inconsistent reads: \(violations.prefix(5))")
    #expect(check.samples > 0)
    #expect(live.value.count == Int64(sets))
    #expect(live.version == Int64(sets))
  }
}

/// A reader that samples `version`, `value`, `version` until the writers are done and records every sample
/// where the value does not belong to a version between the two readings.
private final class ConsistencyCheck: Sendable {
  private let state = Locked((writersDone: 0, samples: 0, violations: [String]()))

  var samples: Int { state.value.samples }
  var violations: [String] { state.value.violations }

  /// Writers start once the reader is sampling, so that the two really overlap.
  func waitForReader() {
    while state.value.samples == 0 { sched_yield() }
  }

  func writerFinished() {
    state.withLock { $0.writersDone += 1 }
  }

  func hammer(_ live: LiveData<Counted>, until writers: Int) {
    while state.value.writersDone < writers {
      let before = live.version
      let value = live.value
      let after = live.version
      state.withLock { state in
        state.samples += 1
        if value.count < before || value.count > after {
          state.violations.append("versions \(before)...\(after) around value \(value.count)")
        }
      }
    }
  }
}
