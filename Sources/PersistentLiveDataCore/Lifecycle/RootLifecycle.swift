/// The top of a lifecycle tree — an application, a scene, a daemon — that activates its root owner.
///
/// Conforming types name the root owner; ``activateRoot()`` and ``deactivateRoot()`` drive its scope and,
/// through it, every attached child.
///
/// ```swift
/// @MainActor final class App: RootLifecycle {
///   let root = RootFlow()
///   var rootLifecycleOwner: any LifecycleOwner { root }
/// }
///
/// let app = App()
/// app.activateRoot()     // on launch / foreground
/// app.deactivateRoot()   // on background
/// ```
@MainActor public protocol RootLifecycle {
  /// The owner whose ``LifecycleOwner/scopeLifecycle`` is the root of the tree.
  ///
  /// ```swift
  /// var rootLifecycleOwner: any LifecycleOwner { root }
  /// ```
  var rootLifecycleOwner: any LifecycleOwner { get }
}

extension RootLifecycle {
  /// Activates the root scope, and with it the attached children.
  ///
  /// ```swift
  /// app.activateRoot()
  /// ```
  public func activateRoot() {
    rootLifecycleOwner.scopeLifecycle.activate()
  }

  /// Deactivates the root scope, and with it the active children.
  ///
  /// ```swift
  /// app.deactivateRoot()
  /// ```
  public func deactivateRoot() {
    rootLifecycleOwner.scopeLifecycle.deactivate()
  }
}
