import Testing

@testable import PersistentLiveData

@MainActor @Suite struct ScopeLifecycleTransitionTests {
  @Test func newScopeIsInitializedAndNotActive() {
    let scope = ScopeLifecycle()
    #expect(scope.state == .initialized)
    #expect(!scope.isActive)
  }

  @Test func activateMovesToActiveAndDeactivateToInactive() {
    let scope = ScopeLifecycle()
    scope.activate()
    #expect(scope.state == .active)
    #expect(scope.isActive)
    scope.deactivate()
    #expect(scope.state == .inactive)
    #expect(!scope.isActive)
    scope.activate()
    #expect(scope.state == .active)
  }

  @Test func repeatingActivateCallsNobody() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    let recorder = StateRecorder()
    scope.subscribe(subscriber)
    recorder.observe(scope)
    scope.activate()
    _ = subscriber.take()
    _ = recorder.take()

    scope.activate()

    #expect(subscriber.take() == [])
    #expect(recorder.take() == [])
  }

  @Test func repeatingDeactivateCallsNobody() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    let recorder = StateRecorder()
    scope.subscribe(subscriber)
    recorder.observe(scope)
    scope.activate()
    scope.deactivate()
    _ = subscriber.take()
    _ = recorder.take()

    scope.deactivate()

    #expect(subscriber.take() == [])
    #expect(recorder.take() == [])
  }

  @Test func deactivatingANeverActivatedScopeCallsNobodyAndStaysInitialized() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    let recorder = StateRecorder()
    scope.subscribe(subscriber)
    recorder.observe(scope)
    _ = recorder.take()

    scope.deactivate()

    #expect(scope.state == .initialized)
    #expect(subscriber.take() == [])
    #expect(recorder.take() == [])
  }

  @Test func subscribersAreCalledBeforeStateObservers() {
    let log = EventLog()
    let scope = ScopeLifecycle()
    let recorder = StateRecorder("observer", log: log)
    recorder.observe(scope)
    let subscriber = RecordingSubscriber("subscriber", log: log)
    scope.subscribe(subscriber)
    _ = log.take()

    scope.activate()
    scope.deactivate()

    #expect(
      log.take() == [
        "subscriber.didLoad", "subscriber.didBecomeActive", "observer.active",
        "subscriber.didBecomeInactive", "observer.inactive",
      ])
  }

  @Test func deactivatingFromInsideActivationStopsTheActivation() {
    let scope = ScopeLifecycle()
    let first = RecordingSubscriber("first")
    let second = RecordingSubscriber("second")
    let recorder = StateRecorder()
    scope.subscribe(first)
    scope.subscribe(second)
    recorder.observe(scope)
    first.onEvent = { event, lifecycle in
      if event == .didBecomeActive { lifecycle.deactivate() }
    }

    scope.activate()

    #expect(scope.state == .inactive)
    #expect(first.take() == [.didLoad, .didBecomeActive, .didBecomeInactive])
    // The second subscriber never saw the activation, so it is not told about the deactivation either.
    #expect(second.take() == [])
    #expect(recorder.take() == [.initialized, .inactive])
  }
}
