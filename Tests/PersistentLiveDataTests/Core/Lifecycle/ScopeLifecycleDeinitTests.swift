import Testing

@testable import PersistentLiveData

/// The last reference to each scope is released on the main actor, so its isolated deinit runs at once.
@MainActor @Suite struct ScopeLifecycleDeinitTests {
  @Test func releasingAnActiveScopeRecordsInactiveThenDeinitialized() {
    let recorder = StateRecorder()
    weak var weakScope: ScopeLifecycle?
    do {
      let scope = ScopeLifecycle()
      weakScope = scope
      recorder.observe(scope)
      scope.activate()
      _ = recorder.take()
    }
    #expect(weakScope == nil)
    #expect(recorder.take() == [.inactive, .deinitialized])
  }

  @Test func releasingANeverActivatedScopeRecordsOnlyDeinitialized() {
    let recorder = StateRecorder()
    do {
      let scope = ScopeLifecycle()
      recorder.observe(scope)
    }
    #expect(recorder.take() == [.initialized, .deinitialized])
  }

  @Test func releasingAnInactiveScopeRecordsOnlyDeinitialized() {
    let recorder = StateRecorder()
    do {
      let scope = ScopeLifecycle()
      scope.activate()
      scope.deactivate()
      recorder.observe(scope)
    }
    #expect(recorder.take() == [.inactive, .deinitialized])
  }

  @Test func subscribersAreNotCalledFromDeinit() {
    let subscriber = RecordingSubscriber()
    do {
      let scope = ScopeLifecycle()
      scope.subscribe(subscriber)
      scope.activate()
      _ = subscriber.take()
    }
    #expect(subscriber.take() == [])
  }

  @Test func releasingAParentDeactivatesAndReleasesItsChildren() {
    let log = EventLog()
    let childSubscriber = RecordingSubscriber("child", log: log)
    let parentRecorder = StateRecorder("parent", log: log)
    weak var weakChild: TestOwner?
    do {
      let parent = TestOwner("parent")
      do {
        let child = TestOwner("child")
        weakChild = child
        parent.scopeLifecycle.attachChild(child)
        child.scopeLifecycle.subscribe(childSubscriber)
      }
      parentRecorder.observe(parent.scopeLifecycle)
      parent.scopeLifecycle.activate()
      _ = log.take()
    }
    #expect(weakChild == nil)
    #expect(
      log.take() == [
        "parent.inactive", "child.didBecomeInactive", "parent.deinitialized",
      ])
  }

  @Test func childReleasedWithItsParentReachesDeinitialized() {
    let childRecorder = StateRecorder("child")
    do {
      let parent = TestOwner("parent")
      do {
        let child = TestOwner("child")
        parent.scopeLifecycle.attachChild(child)
        childRecorder.observe(child.scopeLifecycle)
      }
      parent.scopeLifecycle.activate()
    }
    #expect(childRecorder.take() == [.initialized, .active, .inactive, .deinitialized])
  }

  @Test func releasedOwnerTreeLeavesNoRetainCycle() {
    weak var weakParent: TestOwner?
    weak var weakChild: TestOwner?
    weak var weakScope: ScopeLifecycle?
    weak var weakSubscriber: RecordingSubscriber?
    do {
      let parent = TestOwner("parent")
      let child = TestOwner("child")
      let subscriber = RecordingSubscriber()
      weakParent = parent
      weakChild = child
      weakScope = parent.scopeLifecycle
      weakSubscriber = subscriber
      parent.attachChild(child)
      parent.scopeLifecycle.subscribe(subscriber)
      child.scopeLifecycle.subscribe(subscriber)
      parent.scopeLifecycle.observeState { _ in }
      parent.scopeLifecycle.activate()
    }
    #expect(weakParent == nil)
    #expect(weakChild == nil)
    #expect(weakScope == nil)
    #expect(weakSubscriber == nil)
  }
}
