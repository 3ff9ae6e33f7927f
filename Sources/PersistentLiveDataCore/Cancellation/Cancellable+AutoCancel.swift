extension Cancellable {
  /// Cancels this cancellable as soon as `lifecycle` is in, or enters, one of `states`, and then releases it.
  ///
  /// With the default `.notActive` it lives while the scope is active: a scope that is not active right
  /// now (never activated, or inactive) cancels it at once; otherwise it is cancelled at the next
  /// deactivation. Until then the scope holds it strongly, so there is no need to keep it. If the scope is
  /// released and ``LifecycleState/deinitialized`` is not one of `states`, it is released without being
  /// cancelled.
  ///
  /// ```swift
  /// Task { for await value in settings.values { render(value) } }
  ///   .autoCancel(scope)                        // stops when the scope becomes inactive
  ///
  /// observer.autoCancel(scope, when: .deinitialized)   // lives as long as the scope
  /// ```
  /// - Parameters:
  ///   - lifecycle: The scope to follow.
  ///   - states: The states in which to cancel. Default: every state but ``LifecycleState/active``.
  /// - Returns: `self`, for chaining.
  @MainActor @discardableResult
  public func autoCancel(
    _ lifecycle: ScopeLifecycle, when states: LifecycleStateOptions = .notActive
  ) -> Self {
    let binding = AutoCancelBinding(self)
    let observation = lifecycle.observeState { state in
      if states.contains(state) {
        binding.fire()
      }
    }
    binding.follow(observation)
    return self
  }

  /// Cancels this cancellable as soon as the scope of `owner` is in, or enters, one of `states`, and then
  /// releases it.
  ///
  /// The same as ``autoCancel(_:when:)-(ScopeLifecycle,_)`` with `owner.scopeLifecycle`. The owner itself is
  /// not retained.
  ///
  /// ```swift
  /// Task { await poll() }.autoCancel(self)   // inside a LifecycleOwner
  /// ```
  /// - Parameters:
  ///   - owner: The owner whose scope to follow.
  ///   - states: The states in which to cancel. Default: every state but ``LifecycleState/active``.
  /// - Returns: `self`, for chaining.
  @MainActor @discardableResult
  public func autoCancel(
    _ owner: some LifecycleOwner, when states: LifecycleStateOptions = .notActive
  ) -> Self {
    autoCancel(owner.scopeLifecycle, when: states)
  }
}

/// Holds the cancellable of one `autoCancel` until it fires, then cancels it and ends the state observation.
@MainActor private final class AutoCancelBinding {
  private var target: (any Cancellable)?
  private var observation: (any Cancellable)?

  init(_ target: any Cancellable) {
    self.target = target
  }

  /// Cancels and releases the target, and stops observing the scope.
  func fire() {
    guard let target else { return }
    self.target = nil
    target.cancel()
    observation?.cancel()
    observation = nil
  }

  /// Keeps the token of the state observation, or cancels it at once if the replay already fired.
  func follow(_ observation: any Cancellable) {
    if target == nil {
      observation.cancel()
    } else {
      self.observation = observation
    }
  }
}
