import Testing

@testable import PersistentLiveData

@MainActor @Suite struct ScopeLifecycleChildrenTests {
  @Test func attachingAChildToAnActiveParentActivatesIt() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    parent.scopeLifecycle.activate()

    #expect(parent.scopeLifecycle.attachChild(child))

    #expect(child.scopeLifecycle.isActive)
    #expect(parent.scopeLifecycle.children.count == 1)
  }

  @Test func attachingAChildToAnInactiveParentLeavesItAlone() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")

    #expect(parent.scopeLifecycle.attachChild(child))

    #expect(child.scopeLifecycle.state == .initialized)
  }

  @Test func attachChildReturnsFalseWhenAlreadyAttached() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    #expect(parent.scopeLifecycle.attachChild(child))
    #expect(!parent.scopeLifecycle.attachChild(child))
    #expect(parent.scopeLifecycle.children.count == 1)
  }

  @Test func attachChildReturnsFalseWhenActivationDetachesItAgain() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    parent.scopeLifecycle.activate()
    let subscriber = RecordingSubscriber()
    subscriber.onEvent = { event, _ in
      if event == .didBecomeActive { parent.scopeLifecycle.detachChild(child) }
    }
    child.scopeLifecycle.subscribe(subscriber)

    #expect(!parent.scopeLifecycle.attachChild(child))

    #expect(parent.scopeLifecycle.children.isEmpty)
    #expect(child.scopeLifecycle.state == .inactive)
  }

  @Test func attachChildRefusesCycles() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    let grandchild = TestOwner("grandchild")
    parent.scopeLifecycle.attachChild(child)
    child.scopeLifecycle.attachChild(grandchild)

    #expect(!parent.scopeLifecycle.attachChild(parent))
    #expect(!grandchild.scopeLifecycle.attachChild(parent))
    #expect(!child.scopeLifecycle.attachChild(parent))

    parent.scopeLifecycle.activate()
    #expect(grandchild.scopeLifecycle.isActive)
  }

  @Test func activatingAParentActivatesAttachedChildrenAfterItself() {
    let log = EventLog()
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    let grandchild = TestOwner("grandchild")
    parent.scopeLifecycle.attachChild(child)
    child.scopeLifecycle.attachChild(grandchild)
    let parentSubscriber = RecordingSubscriber("parent", log: log)
    let childSubscriber = RecordingSubscriber("child", log: log)
    let grandchildSubscriber = RecordingSubscriber("grandchild", log: log)
    parent.scopeLifecycle.subscribe(parentSubscriber)
    child.scopeLifecycle.subscribe(childSubscriber)
    grandchild.scopeLifecycle.subscribe(grandchildSubscriber)

    parent.scopeLifecycle.activate()

    #expect(
      log.take() == [
        "parent.didLoad", "parent.didBecomeActive",
        "child.didLoad", "child.didBecomeActive",
        "grandchild.didLoad", "grandchild.didBecomeActive",
      ])
  }

  @Test func deactivatingAParentDeactivatesActiveChildrenAfterItselfAndKeepsThemAttached() {
    let log = EventLog()
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    parent.scopeLifecycle.attachChild(child)
    parent.scopeLifecycle.activate()
    let parentRecorder = StateRecorder("parent", log: log)
    let childRecorder = StateRecorder("child", log: log)
    parentRecorder.observe(parent.scopeLifecycle)
    childRecorder.observe(child.scopeLifecycle)
    _ = log.take()

    parent.scopeLifecycle.deactivate()

    #expect(log.take() == ["parent.inactive", "child.inactive"])
    #expect(child.scopeLifecycle.state == .inactive)
    #expect(parent.scopeLifecycle.children.count == 1)

    parent.scopeLifecycle.activate()
    #expect(child.scopeLifecycle.isActive)
  }

  @Test func deactivatingAParentLeavesNeverActivatedChildrenInitialized() {
    let parent = TestOwner("parent")
    parent.scopeLifecycle.activate()
    let child = TestOwner("child")
    let subscriber = RecordingSubscriber()
    child.scopeLifecycle.subscribe(subscriber)
    parent.scopeLifecycle.attachChild(child)
    child.scopeLifecycle.deactivate()
    _ = subscriber.take()

    parent.scopeLifecycle.deactivate()

    #expect(subscriber.take() == [])
  }

  @Test func detachingAChildDeactivatesIt() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    parent.scopeLifecycle.attachChild(child)
    parent.scopeLifecycle.activate()

    parent.scopeLifecycle.detachChild(child)

    #expect(child.scopeLifecycle.state == .inactive)
    #expect(parent.scopeLifecycle.children.isEmpty)
    // A detached child no longer follows the parent.
    parent.scopeLifecycle.deactivate()
    parent.scopeLifecycle.activate()
    #expect(child.scopeLifecycle.state == .inactive)
  }

  @Test func detachingAnOwnerThatIsNotAttachedDoesNothing() {
    let parent = TestOwner("parent")
    let stranger = TestOwner("stranger")
    stranger.scopeLifecycle.activate()

    parent.scopeLifecycle.detachChild(stranger)

    #expect(stranger.scopeLifecycle.isActive)
  }

  @Test func childrenAreListedInAttachmentOrder() {
    let parent = TestOwner("parent")
    let first = TestOwner("first")
    let second = TestOwner("second")
    parent.scopeLifecycle.attachChild(first)
    parent.scopeLifecycle.attachChild(second)
    #expect(parent.scopeLifecycle.children.map { ($0 as? TestOwner)?.name } == ["first", "second"])
  }

  @Test func routingDefaultImplementationForwardsToTheScope() {
    let parent = TestOwner("parent")
    let child = TestOwner("child")
    parent.scopeLifecycle.activate()

    #expect(parent.attachChild(child))
    #expect(!parent.attachChild(child))
    #expect(parent.children.count == 1)
    #expect(parent.scopeLifecycle.children.first === child)
    #expect(child.scopeLifecycle.isActive)

    parent.detachChild(child)
    #expect(parent.children.isEmpty)
    #expect(child.scopeLifecycle.state == .inactive)
  }

  @Test func scopeLifecycleIsItselfARouter() {
    let router: any LifecycleOwnerRouting = ScopeLifecycle()
    let child = TestOwner("child")
    #expect(router.attachChild(child))
    #expect(router.children.count == 1)
    router.detachChild(child)
    #expect(router.children.isEmpty)
  }
}
