/// The lifecycle of a scope — a screen, a flow, a service — that LiveData observers and subscribers follow.
///
/// A scope starts ``LifecycleState/initialized``. ``activate()`` moves it to ``LifecycleState/active`` and
/// ``deactivate()`` to ``LifecycleState/inactive``; releasing it moves it to
/// ``LifecycleState/deinitialized``, which removes every LiveData observer bound to it.
///
/// Three kinds of parties follow a scope:
/// - **Subscribers** (``subscribe(_:)``), held weakly, receive `didLoad` once, then `didBecomeActive` and
///   `didBecomeInactive` for every activation and deactivation.
/// - **State observers** (``observeState(_:)``) receive the current state at once, then each distinct change,
///   ending with ``LifecycleState/deinitialized``.
/// - **Children** (``attachChild(_:)``), held strongly, follow the scope: they are activated after it and
///   deactivated after it. Parents always change state before their children.
///
/// On each transition subscribers are called first, then state observers, then children. Repeating
/// ``activate()`` or ``deactivate()`` in the same state calls nobody. Everything here is main-actor
/// isolated; only the token of ``observeState(_:)`` may be cancelled from any thread.
///
/// ```swift
/// final class ProfileScreen: LifecycleOwner {
///   let scopeLifecycle = ScopeLifecycle()
/// }
///
/// let screen = ProfileScreen()
/// screen.scopeLifecycle.observeState { print("profile is now \($0)") }   // prints "initialized"
/// screen.scopeLifecycle.activate()                                        // prints "active"
/// ```
@MainActor public final class ScopeLifecycle {
  /// The stage the scope is in.
  ///
  /// ```swift
  /// let scope = ScopeLifecycle()
  /// scope.activate()
  /// scope.state   // .active
  /// ```
  public private(set) var state: LifecycleState {
    get { stateCell.value }
    set { stateCell.value = newValue }
  }

  /// Where ``state`` is stored, shared with the LiveData observers bound to this scope.
  let stateCell = LifecycleStateCell()

  /// The owners attached with ``attachChild(_:)``, in attachment order. The scope holds them strongly.
  ///
  /// ```swift
  /// scope.attachChild(detailScreen)
  /// scope.children.count   // 1
  /// ```
  public private(set) var children: [any LifecycleOwner] = []

  private var subscribers: [SubscriberEntry] = []
  private var stateObservations: [LifecycleStateObservation] = []
  /// The count at which adding an observation first drops the cancelled ones: twice what was left after the
  /// last drop, so that adding stays O(1) amortized (dropping at every add made 10,000 observers bound to
  /// one scope take 14 s).
  private var pruneAt = 32

  /// Creates a scope in the ``LifecycleState/initialized`` state.
  ///
  /// ```swift
  /// let scope = ScopeLifecycle()
  /// scope.state   // .initialized
  /// ```
  public init() {}

  /// Whether the scope is ``LifecycleState/active``.
  ///
  /// ```swift
  /// if scope.isActive { refresh() }
  /// ```
  public var isActive: Bool { state == .active }

  // MARK: - Transitions

  /// Moves the scope to ``LifecycleState/active``, then activates its attached children.
  ///
  /// Subscribers receive `didLoad` (on the first activation they witness) and `didBecomeActive`; state
  /// observers receive ``LifecycleState/active``; then each attached child is activated, parent first.
  /// Calling it on an active scope does nothing. If a callback deactivates the scope again, the remaining
  /// parties are not told about the activation and the children stay as they are.
  ///
  /// ```swift
  /// scope.activate()
  /// scope.activate()   // no effect: already active
  /// ```
  public func activate() {
    guard state == .initialized || state == .inactive else { return }
    state = .active
    notifySubscribersOfActivation()
    notifyStateObservers()
    for child in children {
      guard state == .active else { return }
      guard isAttached(child) else { continue }
      child.scopeLifecycle.activate()
    }
  }

  /// Moves an active scope to ``LifecycleState/inactive``, then deactivates its active children.
  ///
  /// Subscribers receive `didBecomeInactive`, state observers ``LifecycleState/inactive``, then each attached
  /// child is deactivated. Children stay attached and are activated again with the scope. Calling it on a
  /// scope that is not active — including one never activated, which stays ``LifecycleState/initialized``
  /// — does nothing.
  ///
  /// ```swift
  /// scope.activate()
  /// scope.deactivate()
  /// scope.state   // .inactive
  /// ```
  public func deactivate() {
    guard state == .active else { return }
    state = .inactive
    notifySubscribersOfDeactivation()
    notifyStateObservers()
    for child in children {
      guard state == .inactive else { return }
      guard isAttached(child) else { continue }
      child.scopeLifecycle.deactivate()
    }
  }

  // MARK: - Subscribers

  /// Adds a subscriber, held weakly, and replays what it missed.
  ///
  /// Subscribing to an active scope calls `didLoad` and `didBecomeActive` at once. Subscribing to an
  /// initialized or inactive scope calls nothing; the subscriber receives `didLoad` and `didBecomeActive` at
  /// the next activation. Each subscriber receives `didLoad` exactly once, and `didBecomeInactive` only after
  /// a `didBecomeActive`. Subscribing the same object again does nothing. A subscriber stops receiving calls
  /// when it is released; there is no need to unsubscribe.
  ///
  /// Subscribers are not called from the scope's `deinit`: the scope cannot be handed out while it is being
  /// destroyed. Use ``observeState(_:)`` to learn about ``LifecycleState/deinitialized``.
  ///
  /// ```swift
  /// final class Analytics: LifecycleSubscriber {
  ///   func didBecomeActive(_ lifecycle: ScopeLifecycle) { track("screen shown") }
  /// }
  /// let analytics = Analytics()
  /// scope.subscribe(analytics)
  /// ```
  /// - Parameter subscriber: The object to notify. The scope does not keep it alive.
  public func subscribe(_ subscriber: any LifecycleSubscriber) {
    subscribers.removeAll { $0.subscriber == nil }
    guard !subscribers.contains(where: { $0.subscriber === subscriber }) else { return }
    let entry = SubscriberEntry(subscriber)
    subscribers.append(entry)
    guard state == .active else { return }
    entry.hasLoaded = true
    subscriber.didLoad(self)
    guard state == .active, !entry.isActive else { return }
    entry.isActive = true
    subscriber.didBecomeActive(self)
  }

  private func notifySubscribersOfActivation() {
    for entry in subscribers {
      guard let subscriber = entry.subscriber else { continue }
      if !entry.hasLoaded {
        guard state == .active else { return }
        entry.hasLoaded = true
        subscriber.didLoad(self)
      }
      if !entry.isActive {
        guard state == .active else { return }
        entry.isActive = true
        subscriber.didBecomeActive(self)
      }
    }
    subscribers.removeAll { $0.subscriber == nil }
  }

  private func notifySubscribersOfDeactivation() {
    for entry in subscribers {
      guard let subscriber = entry.subscriber, entry.isActive else { continue }
      guard state != .active else { return }
      entry.isActive = false
      subscriber.didBecomeInactive(self)
    }
    subscribers.removeAll { $0.subscriber == nil }
  }

  // MARK: - State observers

  /// Calls `onChange` with the current state now, then with each distinct state the scope moves to.
  ///
  /// The replay happens synchronously, before this method returns. Later calls happen on the main actor, in
  /// registration order, after the subscribers. An observer never receives the same state twice in a row;
  /// if a callback changes the state while a change is being delivered, observers not yet called skip to
  /// the newest state. The last call is ``LifecycleState/deinitialized``, made from the scope's `deinit`
  /// (preceded by ``LifecycleState/inactive`` if the scope was active); the callback is released after it.
  ///
  /// The returned token stops the observation. `cancel()` may be called from any thread, also from inside a
  /// callback; once it returns no new call begins (a call the main actor had already begun may finish).
  /// Cancelling releases `onChange` and what it captured. The scope keeps the observation alive: ignoring
  /// the token is fine when the callback should live as long as the scope.
  ///
  /// ```swift
  /// let token = scope.observeState { state in
  ///   if state == .deinitialized { print("scope ended") }
  /// }
  /// token.cancel()   // from any thread
  /// ```
  /// - Parameter onChange: Called on the main actor with each state. It should not capture the scope
  ///   strongly, or the scope is never released.
  /// - Returns: A token that ends the observation.
  @discardableResult
  public func observeState(_ onChange: @escaping @MainActor (LifecycleState) -> Void) -> any Cancellable {
    addStateObservation(onChange)
  }

  /// ``observeState(_:)`` returning the observation itself, for the LiveData observers bound to the scope.
  func addStateObservation(
    _ onChange: @escaping @MainActor (LifecycleState) -> Void
  ) -> LifecycleStateObservation {
    if stateObservations.count >= pruneAt {
      stateObservations.removeAll { $0.isCancelled }
      pruneAt = max(32, stateObservations.count * 2)
    }
    let observation = LifecycleStateObservation(onChange)
    stateObservations.append(observation)
    observation.deliver(state)
    return observation
  }

  private func notifyStateObservers() {
    for observation in stateObservations {
      observation.deliver(state)
    }
    stateObservations.removeAll { $0.isCancelled }
  }

  // MARK: - Children

  /// Attaches a child that follows this scope, and activates it now if this scope is active.
  ///
  /// The scope holds the child strongly until it is detached or the scope is released. Attaching is refused
  /// — and `false` returned — when the child (or its scope) is already attached here, when the child's scope
  /// is this scope or one of its ancestors (that would form a cycle), or when the child's activation detached
  /// it again.
  ///
  /// ```swift
  /// let attached = screen.scopeLifecycle.attachChild(detail)   // true; detail is active if screen is
  /// screen.scopeLifecycle.attachChild(detail)                  // false: already attached
  /// ```
  /// - Parameter child: The owner whose ``LifecycleOwner/scopeLifecycle`` should follow this scope.
  /// - Returns: Whether the child is attached when the call returns.
  @discardableResult
  public func attachChild(_ child: any LifecycleOwner) -> Bool {
    let childScope = child.scopeLifecycle
    let alreadyAttached = children.contains { $0 === child || $0.scopeLifecycle === childScope }
    guard !alreadyAttached else { return false }
    guard !childScope.containsInSubtree(self) else { return false }
    children.append(child)
    if isActive {
      childScope.activate()
    }
    return isAttached(child)
  }

  /// Detaches a child and deactivates it.
  ///
  /// The child keeps its state machine: it moves to ``LifecycleState/inactive`` if it was active and no
  /// longer follows this scope. Detaching an owner that is not attached here does nothing.
  ///
  /// ```swift
  /// screen.scopeLifecycle.detachChild(detail)
  /// detail.scopeLifecycle.isActive   // false
  /// ```
  /// - Parameter child: An owner previously passed to ``attachChild(_:)``.
  public func detachChild(_ child: any LifecycleOwner) {
    guard let index = children.firstIndex(where: { $0 === child }) else { return }
    children.remove(at: index)
    child.scopeLifecycle.deactivate()
  }

  private func isAttached(_ child: any LifecycleOwner) -> Bool {
    children.contains { $0 === child }
  }

  /// Whether `scope` is this scope or one of its descendants.
  private func containsInSubtree(_ scope: ScopeLifecycle) -> Bool {
    self === scope || children.contains { $0.scopeLifecycle.containsInSubtree(scope) }
  }

  // MARK: - Deinit

  /// Deactivates the scope if it is active, deactivates and releases its children, moves it to
  /// ``LifecycleState/deinitialized`` and ends every state observation.
  ///
  /// State observers receive ``LifecycleState/inactive`` (if the scope was active) and then
  /// ``LifecycleState/deinitialized``. Subscribers are not called: they would receive a scope that is
  /// being destroyed.
  isolated deinit {
    if state == .active {
      state = .inactive
      notifyStateObservers()
    }
    let detached = children
    children = []
    for child in detached {
      child.scopeLifecycle.deactivate()
    }
    state = .deinitialized
    notifyStateObservers()
    let ended = stateObservations
    stateObservations = []
    for observation in ended {
      observation.cancel()
    }
  }
}

extension ScopeLifecycle: LifecycleOwnerRouting {}

/// A weakly held subscriber and what it has been told so far.
@MainActor private final class SubscriberEntry {
  weak var subscriber: (any LifecycleSubscriber)?
  /// `didLoad` was called.
  var hasLoaded = false
  /// `didBecomeActive` was called and `didBecomeInactive` not yet.
  var isActive = false

  init(_ subscriber: any LifecycleSubscriber) {
    self.subscriber = subscriber
  }
}
