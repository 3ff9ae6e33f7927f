import Foundation
import Testing

@testable import PersistentLiveData

@MainActor @Suite struct AutoCancellationTests {
  @Test func cancelsAtOnceOnANeverActivatedScopeWithTheDefaultStates() {
    let scope = ScopeLifecycle()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(scope)
    #expect(cancellable.cancelCount == 1)
  }

  @Test func cancelsAtOnceWhenTheScopeIsAlreadyInOneOfTheStates() {
    let scope = ScopeLifecycle()
    scope.activate()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(scope, when: .active)
    #expect(cancellable.cancelCount == 1)
  }

  @Test func cancelsWhenTheScopeLaterEntersOneOfTheStates() {
    let scope = ScopeLifecycle()
    scope.activate()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(scope)
    #expect(!cancellable.isCancelled)

    scope.deactivate()
    #expect(cancellable.cancelCount == 1)

    scope.activate()
    scope.deactivate()
    #expect(cancellable.cancelCount == 1)
  }

  @Test func doesNotCancelInOtherStates() {
    let scope = ScopeLifecycle()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(scope, when: .deinitialized)
    scope.activate()
    scope.deactivate()
    scope.activate()
    #expect(!cancellable.isCancelled)
  }

  @Test func cancelsWhenTheScopeIsReleased() {
    let cancellable = CountingCancellable()
    do {
      let scope = ScopeLifecycle()
      scope.activate()
      cancellable.autoCancel(scope, when: .deinitialized)
      #expect(!cancellable.isCancelled)
    }
    #expect(cancellable.cancelCount == 1)
  }

  @Test func releasesTheCancellableOnceCancelled() {
    let scope = ScopeLifecycle()
    scope.activate()
    weak var weakCancellable: CountingCancellable?
    do {
      let cancellable = CountingCancellable()
      weakCancellable = cancellable
      cancellable.autoCancel(scope)
    }
    // The scope keeps it alive until it fires…
    #expect(weakCancellable != nil)
    scope.deactivate()
    // …and lets it go afterwards.
    #expect(weakCancellable == nil)
  }

  @Test func releasesTheCancellableWhenCancelledAtOnce() {
    let scope = ScopeLifecycle()
    weak var weakCancellable: CountingCancellable?
    do {
      let cancellable = CountingCancellable()
      weakCancellable = cancellable
      cancellable.autoCancel(scope)
      #expect(cancellable.isCancelled)
    }
    #expect(weakCancellable == nil)
  }

  @Test func releasesTheCancellableWithTheScopeEvenIfNeverCancelled() {
    weak var weakCancellable: CountingCancellable?
    do {
      let scope = ScopeLifecycle()
      let cancellable = CountingCancellable()
      weakCancellable = cancellable
      cancellable.autoCancel(scope, when: .active)
    }
    #expect(weakCancellable == nil)
  }

  @Test func autoCancelDoesNotKeepTheScopeAlive() {
    weak var weakScope: ScopeLifecycle?
    let cancellable = CountingCancellable()
    do {
      let scope = ScopeLifecycle()
      weakScope = scope
      scope.activate()
      cancellable.autoCancel(scope)
    }
    #expect(weakScope == nil)
    #expect(cancellable.cancelCount == 1)
  }

  @Test func autoCancelWithAnOwnerFollowsItsScopeWithoutRetainingTheOwner() {
    weak var weakOwner: TestOwner?
    let cancellable = CountingCancellable()
    do {
      let owner = TestOwner()
      weakOwner = owner
      owner.scopeLifecycle.activate()
      let returned = cancellable.autoCancel(owner)
      #expect(returned === cancellable)
      #expect(!cancellable.isCancelled)
      owner.scopeLifecycle.deactivate()
      #expect(cancellable.cancelCount == 1)
    }
    #expect(weakOwner == nil)
  }

  @Test func autoCancelWithAnOwnerCancelsAtOnceWhenNotActive() {
    let owner = TestOwner()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(owner)
    #expect(cancellable.cancelCount == 1)
  }

  @Test func taskIsCancelledWhenTheScopeDeactivates() async {
    let scope = ScopeLifecycle()
    scope.activate()
    let task = Task {
      while !Task.isCancelled { await Task.yield() }
    }
    task.autoCancel(scope)
    scope.deactivate()
    await task.value
    #expect(task.isCancelled)
  }

  @Test func autoCancelledObservationInsideADisposeBagIsCancelledOnce() async {
    let scope = ScopeLifecycle()
    scope.activate()
    let bag = DisposeBag()
    let cancellable = CountingCancellable()
    cancellable.autoCancel(scope).disposed(by: bag)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Thread {
        bag.dispose()
        continuation.resume()
      }.start()
    }
    #expect(cancellable.cancelCount == 1)
    scope.deactivate()
    // autoCancel fires on its own; cancellables must tolerate a second cancel.
    #expect(cancellable.cancelCount == 2)
  }
}
