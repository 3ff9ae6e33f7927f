import Foundation
import Synchronization
import Testing

@testable import PersistentLiveData

@MainActor @Suite struct ScopeLifecycleStateObservationTests {
  @Test func observeStateReplaysTheCurrentStateSynchronously() {
    let scope = ScopeLifecycle()
    var fresh: [LifecycleState] = []
    scope.observeState { fresh.append($0) }
    #expect(fresh == [.initialized])

    scope.activate()
    var late: [LifecycleState] = []
    scope.observeState { late.append($0) }
    #expect(late == [.active])

    scope.deactivate()
    var later: [LifecycleState] = []
    scope.observeState { later.append($0) }
    #expect(later == [.inactive])
  }

  @Test func observeStateDeliversEachDistinctChangeOnce() {
    let scope = ScopeLifecycle()
    let recorder = StateRecorder()
    recorder.observe(scope)
    scope.activate()
    scope.activate()
    scope.deactivate()
    scope.deactivate()
    scope.activate()
    #expect(recorder.take() == [.initialized, .active, .inactive, .active])
  }

  @Test func observersAreCalledInRegistrationOrder() {
    let log = EventLog()
    let scope = ScopeLifecycle()
    let first = StateRecorder("first", log: log)
    let second = StateRecorder("second", log: log)
    first.observe(scope)
    second.observe(scope)
    _ = log.take()
    scope.activate()
    #expect(log.take() == ["first.active", "second.active"])
  }

  @Test func observeStateEndsAfterDeinitialized() {
    let recorder = StateRecorder()
    weak var weakScope: ScopeLifecycle?
    do {
      let scope = ScopeLifecycle()
      weakScope = scope
      recorder.observe(scope)
      scope.activate()
    }
    #expect(weakScope == nil)
    #expect(recorder.take() == [.initialized, .active, .inactive, .deinitialized])
    // The scope released the callback: the recorder is the only owner of what it captured.
    recorder.token?.cancel()
    #expect(recorder.take() == [])
  }

  @Test func observeStateReleasesTheCallbackAfterDeinitialized() {
    weak var weakCapture: EventLog?
    do {
      let capture = EventLog()
      weakCapture = capture
      let scope = ScopeLifecycle()
      scope.observeState { capture.append("\($0)") }
      #expect(weakCapture != nil)
    }
    #expect(weakCapture == nil)
  }

  @Test func cancelledObserverIsNotCalledAgain() {
    let scope = ScopeLifecycle()
    var states: [LifecycleState] = []
    let token = scope.observeState { states.append($0) }
    token.cancel()
    token.cancel()
    scope.activate()
    scope.deactivate()
    #expect(states == [.initialized])
  }

  @Test func cancellingReleasesTheCallbackAtOnce() {
    let scope = ScopeLifecycle()
    weak var weakCapture: EventLog?
    let token: any Cancellable
    do {
      let capture = EventLog()
      weakCapture = capture
      token = scope.observeState { capture.append("\($0)") }
    }
    #expect(weakCapture != nil)
    token.cancel()
    #expect(weakCapture == nil)
  }

  @Test func observerCancelledDuringANotificationIsNotCalledAfterwards() {
    let scope = ScopeLifecycle()
    var second: [LifecycleState] = []
    var secondToken: (any Cancellable)?
    scope.observeState { state in
      if state == .active { secondToken?.cancel() }
    }
    secondToken = scope.observeState { second.append($0) }

    scope.activate()
    scope.deactivate()

    #expect(second == [.initialized])
  }

  @Test func observerCancellingItselfDuringANotificationIsNotCalledAgain() {
    let scope = ScopeLifecycle()
    var states: [LifecycleState] = []
    var token: (any Cancellable)?
    token = scope.observeState { state in
      states.append(state)
      if state == .active { token?.cancel() }
    }
    scope.activate()
    scope.deactivate()
    #expect(states == [.initialized, .active])
  }

  @Test func observerAddedDuringANotificationReceivesTheCurrentStateOnce() {
    let scope = ScopeLifecycle()
    var late: [LifecycleState] = []
    var added = false
    scope.observeState { state in
      guard state == .active, !added else { return }
      added = true
      scope.observeState { late.append($0) }
    }
    scope.activate()
    scope.deactivate()
    #expect(late == [.active, .inactive])
  }

  @Test func stateChangedFromInsideACallbackEndsEveryObserverOnTheNewestState() {
    let scope = ScopeLifecycle()
    let first = StateRecorder("first")
    first.observe(scope)
    scope.observeState { state in
      if state == .active { scope.deactivate() }
    }
    let last = StateRecorder("last")
    last.observe(scope)

    scope.activate()

    #expect(scope.state == .inactive)
    #expect(first.take() == [.initialized, .active, .inactive])
    // The last observer had not been told about .active yet: it skips straight to the newest state.
    #expect(last.take() == [.initialized, .inactive])
  }

  @Test func observeStateTokenCanBeCancelledFromAnotherThread() async {
    let scope = ScopeLifecycle()
    var states: [LifecycleState] = []
    let token = scope.observeState { states.append($0) }

    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Thread {
        token.cancel()
        continuation.resume()
      }.start()
    }

    scope.activate()
    scope.deactivate()
    #expect(states == [.initialized])
  }

  @Test func cancelRacingWithTransitionsStopsCallbacksOnceItReturns() async {
    let scope = ScopeLifecycle()
    var count = 0
    let token = scope.observeState { _ in count += 1 }
    let cancelled = ThreadFlag()

    let thread = Thread {
      usleep(2_000)
      token.cancel()
      cancelled.set()
    }
    thread.start()
    while !cancelled.isSet {
      scope.activate()
      scope.deactivate()
      await Task.yield()
    }
    let countAfterCancel = count
    for _ in 0..<100 {
      scope.activate()
      scope.deactivate()
    }
    #expect(count == countAfterCancel)
  }
}
