import Testing

@testable import PersistentLiveData

@MainActor private final class TestApp: RootLifecycle {
  let root = TestOwner("root")
  var rootLifecycleOwner: any LifecycleOwner { root }
}

@MainActor private final class TestViewModel: LifecycleDependent {
  weak var scopeLifecycle: ScopeLifecycle?

  init(scopeLifecycle: ScopeLifecycle) { self.scopeLifecycle = scopeLifecycle }
}

@MainActor @Suite struct RootLifecycleTests {
  @Test func activateRootActivatesTheRootAndItsChildren() {
    let app = TestApp()
    let child = TestOwner("child")
    app.root.attachChild(child)

    app.activateRoot()

    #expect(app.root.scopeLifecycle.isActive)
    #expect(child.scopeLifecycle.isActive)
  }

  @Test func deactivateRootDeactivatesTheRootAndItsChildren() {
    let app = TestApp()
    let child = TestOwner("child")
    app.root.attachChild(child)
    app.activateRoot()

    app.deactivateRoot()

    #expect(app.root.scopeLifecycle.state == .inactive)
    #expect(child.scopeLifecycle.state == .inactive)
  }

  @Test func deactivateRootBeforeActivateRootCallsNobody() {
    let app = TestApp()
    let subscriber = RecordingSubscriber()
    app.root.scopeLifecycle.subscribe(subscriber)
    app.deactivateRoot()
    #expect(app.root.scopeLifecycle.state == .initialized)
    #expect(subscriber.take() == [])
  }

  @Test func lifecycleDependentDoesNotKeepTheScopeAlive() {
    var viewModel: TestViewModel?
    do {
      let owner = TestOwner()
      viewModel = TestViewModel(scopeLifecycle: owner.scopeLifecycle)
      #expect(viewModel?.scopeLifecycle === owner.scopeLifecycle)
    }
    #expect(viewModel?.scopeLifecycle == nil)
  }
}
