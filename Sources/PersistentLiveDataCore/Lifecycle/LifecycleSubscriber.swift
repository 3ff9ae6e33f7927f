/// An object told about the transitions of a ``ScopeLifecycle``.
///
/// Subscribe with ``ScopeLifecycle/subscribe(_:)``; the scope holds the subscriber weakly. Every method has
/// an empty default implementation, so implement only what you need. Subscribers are called on the main
/// actor, before the scope's state observers and children. They are not called from the scope's `deinit`.
///
/// ```swift
/// final class Refresher: LifecycleSubscriber {
///   func didLoad(_ lifecycle: ScopeLifecycle) { prepare() }
///   func didBecomeActive(_ lifecycle: ScopeLifecycle) { startPolling() }
///   func didBecomeInactive(_ lifecycle: ScopeLifecycle) { stopPolling() }
/// }
/// ```
@MainActor public protocol LifecycleSubscriber: AnyObject {
  /// Called once, before the first `didBecomeActive` this subscriber receives.
  ///
  /// ```swift
  /// func didLoad(_ lifecycle: ScopeLifecycle) { buildCaches() }
  /// ```
  /// - Parameter lifecycle: The scope that loaded.
  func didLoad(_ lifecycle: ScopeLifecycle)

  /// Called on every activation of the scope (and at once when subscribing to an active scope).
  ///
  /// ```swift
  /// func didBecomeActive(_ lifecycle: ScopeLifecycle) { startPolling() }
  /// ```
  /// - Parameter lifecycle: The scope that became active.
  func didBecomeActive(_ lifecycle: ScopeLifecycle)

  /// Called on every deactivation that follows a `didBecomeActive` of this subscriber.
  ///
  /// ```swift
  /// func didBecomeInactive(_ lifecycle: ScopeLifecycle) { stopPolling() }
  /// ```
  /// - Parameter lifecycle: The scope that became inactive.
  func didBecomeInactive(_ lifecycle: ScopeLifecycle)
}

extension LifecycleSubscriber {
  /// Does nothing; implement it to prepare on the first activation.
  ///
  /// ```swift
  /// func didLoad(_ lifecycle: ScopeLifecycle) {}
  /// ```
  /// - Parameter lifecycle: The scope that loaded.
  public func didLoad(_ lifecycle: ScopeLifecycle) {}

  /// Does nothing; implement it to react to each activation.
  ///
  /// ```swift
  /// func didBecomeActive(_ lifecycle: ScopeLifecycle) {}
  /// ```
  /// - Parameter lifecycle: The scope that became active.
  public func didBecomeActive(_ lifecycle: ScopeLifecycle) {}

  /// Does nothing; implement it to react to each deactivation.
  ///
  /// ```swift
  /// func didBecomeInactive(_ lifecycle: ScopeLifecycle) {}
  /// ```
  /// - Parameter lifecycle: The scope that became inactive.
  public func didBecomeInactive(_ lifecycle: ScopeLifecycle) {}
}
