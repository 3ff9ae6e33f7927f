import Testing

@testable import PersistentLiveData

@MainActor @Suite struct ScopeLifecycleSubscriberTests {
  @Test func didLoadIsCalledExactlyOnceOnTheFirstActivation() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    scope.subscribe(subscriber)
    #expect(subscriber.take() == [])

    scope.activate()
    #expect(subscriber.take() == [.didLoad, .didBecomeActive])

    scope.deactivate()
    scope.activate()
    scope.deactivate()
    scope.activate()
    #expect(
      subscriber.take() == [
        .didBecomeInactive, .didBecomeActive, .didBecomeInactive, .didBecomeActive,
      ])
  }

  @Test func didBecomeInactiveIsCalledOnEveryDeactivationAfterAnActivation() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    scope.subscribe(subscriber)
    for _ in 0..<3 {
      scope.activate()
      scope.deactivate()
    }
    #expect(
      subscriber.take() == [
        .didLoad, .didBecomeActive, .didBecomeInactive,
        .didBecomeActive, .didBecomeInactive,
        .didBecomeActive, .didBecomeInactive,
      ])
  }

  @Test func subscribingToAnActiveScopeReplaysDidLoadAndDidBecomeActive() {
    let scope = ScopeLifecycle()
    scope.activate()
    let subscriber = RecordingSubscriber()

    scope.subscribe(subscriber)
    #expect(subscriber.take() == [.didLoad, .didBecomeActive])

    scope.deactivate()
    scope.activate()
    #expect(subscriber.take() == [.didBecomeInactive, .didBecomeActive])
  }

  @Test func subscribingToAnInactiveScopeWaitsForTheNextActivation() {
    let scope = ScopeLifecycle()
    scope.activate()
    scope.deactivate()
    let subscriber = RecordingSubscriber()

    scope.subscribe(subscriber)
    #expect(subscriber.take() == [])

    scope.activate()
    #expect(subscriber.take() == [.didLoad, .didBecomeActive])
  }

  @Test func subscribingTheSameObjectTwiceCallsItOnce() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    scope.subscribe(subscriber)
    scope.subscribe(subscriber)
    scope.activate()
    #expect(subscriber.take() == [.didLoad, .didBecomeActive])
    scope.subscribe(subscriber)
    #expect(subscriber.take() == [])
  }

  @Test func subscribersAreCalledInSubscriptionOrder() {
    let log = EventLog()
    let scope = ScopeLifecycle()
    let first = RecordingSubscriber("first", log: log)
    let second = RecordingSubscriber("second", log: log)
    scope.subscribe(first)
    scope.subscribe(second)
    scope.activate()
    #expect(
      log.take() == [
        "first.didLoad", "first.didBecomeActive", "second.didLoad", "second.didBecomeActive",
      ])
  }

  @Test func subscribersAreHeldWeakly() {
    let scope = ScopeLifecycle()
    weak var weakSubscriber: RecordingSubscriber?
    do {
      let subscriber = RecordingSubscriber()
      weakSubscriber = subscriber
      scope.subscribe(subscriber)
      scope.activate()
    }
    #expect(weakSubscriber == nil)
    // A released subscriber is skipped without trouble.
    scope.deactivate()
    scope.activate()
    #expect(scope.isActive)
  }

  @Test func subscriberReceivesTheScopeItSubscribedTo() {
    let scope = ScopeLifecycle()
    let subscriber = RecordingSubscriber()
    var received: [ObjectIdentifier] = []
    subscriber.onEvent = { _, lifecycle in received.append(ObjectIdentifier(lifecycle)) }
    scope.subscribe(subscriber)
    scope.activate()
    scope.deactivate()
    #expect(received == Array(repeating: ObjectIdentifier(scope), count: 3))
  }

  @Test func subscriberWithDefaultImplementationsCanBeSubscribed() {
    let scope = ScopeLifecycle()
    let subscriber = SilentSubscriber()
    scope.subscribe(subscriber)
    scope.activate()
    scope.deactivate()
    #expect(scope.state == .inactive)
  }

  @Test func subscriberAddedDuringActivationIsReplayedOnce() {
    let scope = ScopeLifecycle()
    let first = RecordingSubscriber("first")
    let late = RecordingSubscriber("late")
    first.onEvent = { event, lifecycle in
      if event == .didBecomeActive { lifecycle.subscribe(late) }
    }
    scope.subscribe(first)

    scope.activate()

    #expect(late.take() == [.didLoad, .didBecomeActive])
    scope.deactivate()
    #expect(late.take() == [.didBecomeInactive])
  }

  @Test func reactivatingFromInsideDeactivationLeavesEverySubscriberActiveOnce() {
    let scope = ScopeLifecycle()
    let first = RecordingSubscriber("first")
    let second = RecordingSubscriber("second")
    scope.subscribe(first)
    scope.subscribe(second)
    scope.activate()
    _ = first.take()
    _ = second.take()
    var reactivated = false
    first.onEvent = { event, lifecycle in
      if event == .didBecomeInactive, !reactivated {
        reactivated = true
        lifecycle.activate()
      }
    }

    scope.deactivate()

    #expect(scope.isActive)
    #expect(first.take() == [.didBecomeInactive, .didBecomeActive])
    // The second subscriber was still active when the scope came back: it is told nothing.
    #expect(second.take() == [])
  }
}
