import Testing

@testable import PersistentLiveData

/// Scope routing as seen by observers bound to child scopes: attaching, cascading, detaching.
@MainActor @Suite struct LiveDataScopeRoutingTests {
  @Test func attachingAChildToAnActiveParentActivatesItsObservers() {
    let parent = ScopedOwner()
    let child = ScopedOwner()
    parent.scopeLifecycle.activate()
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: child, recorder.callback)
    recorder.expectNothing()

    #expect(parent.scopeLifecycle.attachChild(child))
    #expect(child.scopeLifecycle.isActive)
    recorder.expect([0])
    #expect(!parent.scopeLifecycle.attachChild(child), "already attached")
    #expect(parent.scopeLifecycle.children.count == 1)
    recorder.expectNothing()
  }

  @Test func deactivatingTheParentPausesChildObserversAndKeepsTheChildAttached() {
    let parent = ScopedOwner()
    let child = ScopedOwner()
    parent.scopeLifecycle.activate()
    parent.scopeLifecycle.attachChild(child)
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: child, recorder.callback)
    recorder.expect([0])

    parent.scopeLifecycle.deactivate()
    #expect(child.scopeLifecycle.state == .inactive)
    #expect(parent.scopeLifecycle.children.contains { $0 === child })
    live.set(1)
    live.set(2)
    recorder.expectNothing()

    parent.scopeLifecycle.activate()
    #expect(child.scopeLifecycle.isActive)
    recorder.expect([2], "the child's observer catches up with the latest version once")
  }

  @Test func detachingDeactivatesTheChildsObservers() {
    let parent = ScopedOwner()
    let child = ScopedOwner()
    parent.scopeLifecycle.activate()
    parent.scopeLifecycle.attachChild(child)
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observe(owner: child, recorder.callback)
    recorder.expect([0])

    parent.scopeLifecycle.detachChild(child)
    #expect(!child.scopeLifecycle.isActive)
    #expect(parent.scopeLifecycle.children.isEmpty)
    live.set(1)
    recorder.expectNothing()
    parent.scopeLifecycle.deactivate()
    parent.scopeLifecycle.activate()
    recorder.expectNothing("a detached child no longer follows its former parent")
  }

  @Test func subscribersSeeDidLoadOnceAndReplayOnActiveScope() {
    let scope = ScopeLifecycle()
    let early = CountingSubscriber()
    scope.subscribe(early)
    scope.activate()
    scope.deactivate()
    scope.activate()
    #expect(early.calls == ["load", "active", "inactive", "active"])

    let late = CountingSubscriber()
    scope.subscribe(late)
    #expect(late.calls == ["load", "active"], "subscribing to an active scope replays both")
  }
}

@MainActor private final class CountingSubscriber: LifecycleSubscriber {
  var calls: [String] = []
  func didLoad(_ lifecycle: ScopeLifecycle) { calls.append("load") }
  func didBecomeActive(_ lifecycle: ScopeLifecycle) { calls.append("active") }
  func didBecomeInactive(_ lifecycle: ScopeLifecycle) { calls.append("inactive") }
}
