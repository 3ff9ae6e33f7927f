public import PersistentLiveData

/// A lifecycle owner that tests drive by hand: activate, deactivate, destroy.
///
/// Use it to test view models and other observers without any UI: bind observers to it, move it through its
/// states, and check what was delivered. Pair it with
/// ``PersistentLiveData/PersistentStore/inMemory(options:)`` for persistence without files.
///
/// ```swift
/// import PersistentLiveData
/// import PersistentLiveDataTesting
/// import Testing
///
/// @MainActor @Test func showsTheLatestTitleWhenReturning() throws {
///   let store = try PersistentStore.inMemory()
///   let title = try store.liveData("title", default: "")
///   let owner = TestLifecycleOwner()
///   var shown: [String] = []
///   title.observe(owner: owner) { shown.append($0) }
///
///   owner.activate()              // delivers ""
///   owner.deactivate()
///   try title.set("a")
///   try title.set("b")            // nothing while inactive
///   owner.activate()              // delivers only "b"
///   #expect(shown == ["", "b"])
///   owner.destroy()               // observers bound to it are removed
///   #expect(!title.hasObservers)
/// }
/// ```
@MainActor
public final class TestLifecycleOwner: LifecycleOwner {
  /// The scope the owner's observers are bound to. After ``destroy()`` it is a fresh, never-activated
  /// scope: the destroyed one has reached ``LifecycleState/deinitialized``.
  public private(set) var scopeLifecycle = ScopeLifecycle()
  /// The states the owner went through, starting with `.initialized`.
  public private(set) var states: [LifecycleState] = []
  private var stateSubscription: (any Cancellable)?

  /// Creates an owner whose scope is ``LifecycleState/initialized``.
  ///
  /// ```swift
  /// let owner = TestLifecycleOwner()
  /// owner.state   // .initialized
  /// ```
  public init() {
    record(scopeLifecycle)
  }

  /// The current state of ``scopeLifecycle``.
  ///
  /// ```swift
  /// owner.activate()
  /// owner.state   // .active
  /// ```
  public var state: LifecycleState { scopeLifecycle.state }

  /// Activates the scope: bound observers receive the latest version they have not seen.
  ///
  /// ```swift
  /// owner.activate()
  /// ```
  public func activate() { scopeLifecycle.activate() }

  /// Deactivates the scope: bound observers wait until the next ``activate()``.
  ///
  /// ```swift
  /// owner.deactivate()
  /// ```
  public func deactivate() { scopeLifecycle.deactivate() }

  /// Ends the scope as a released screen would: it is deactivated and deallocated, which moves it to
  /// ``LifecycleState/deinitialized`` and removes every LiveData observer bound to this owner. The owner
  /// then holds a fresh, never-activated scope.
  ///
  /// ```swift
  /// owner.destroy()
  /// owner.states.last   // .deinitialized
  /// ```
  public func destroy() {
    scopeLifecycle.deactivate()
    let fresh = ScopeLifecycle()
    scopeLifecycle = fresh  // the old scope is released here and reports .deinitialized
    stateSubscription = nil
    record(fresh, replaying: false)
  }

  private func record(_ scope: ScopeLifecycle, replaying: Bool = true) {
    var first = true
    stateSubscription = scope.observeState { [weak self] state in
      defer { first = false }
      if first && !replaying { return }
      self?.states.append(state)
    }
  }
}
