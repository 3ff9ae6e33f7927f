/// An object that attaches and detaches child ``LifecycleOwner``s.
///
/// A type that is also a ``LifecycleOwner`` gets every requirement for free: the default implementation
/// forwards to its ``LifecycleOwner/scopeLifecycle``. ``ScopeLifecycle`` itself conforms.
///
/// ```swift
/// final class AppFlow: LifecycleOwner, LifecycleOwnerRouting {
///   let scopeLifecycle = ScopeLifecycle()
///
///   func showDetail() {
///     attachChild(DetailScreen())   // active at once if the flow is active
///   }
/// }
/// ```
@MainActor public protocol LifecycleOwnerRouting: AnyObject {
  /// The attached children, in attachment order.
  ///
  /// ```swift
  /// flow.children.count
  /// ```
  var children: [any LifecycleOwner] { get }

  /// Attaches a child, activating it now if this scope is active.
  ///
  /// ```swift
  /// flow.attachChild(detail)   // false if it was already attached
  /// ```
  /// - Parameter child: The owner to attach.
  /// - Returns: `false` if the child was already attached here, or if its activation detached it again.
  @discardableResult func attachChild(_ child: any LifecycleOwner) -> Bool

  /// Detaches a child and deactivates it.
  ///
  /// ```swift
  /// flow.detachChild(detail)
  /// ```
  /// - Parameter child: An attached owner; any other owner is ignored.
  func detachChild(_ child: any LifecycleOwner)
}

extension LifecycleOwnerRouting where Self: LifecycleOwner {
  /// The children attached to ``LifecycleOwner/scopeLifecycle``.
  ///
  /// ```swift
  /// flow.children   // == flow.scopeLifecycle.children
  /// ```
  public var children: [any LifecycleOwner] { scopeLifecycle.children }

  /// Attaches a child to ``LifecycleOwner/scopeLifecycle``; see ``ScopeLifecycle/attachChild(_:)``.
  ///
  /// ```swift
  /// flow.attachChild(detail)
  /// ```
  /// - Parameter child: The owner to attach.
  /// - Returns: Whether the child is attached when the call returns.
  @discardableResult
  public func attachChild(_ child: any LifecycleOwner) -> Bool {
    scopeLifecycle.attachChild(child)
  }

  /// Detaches a child from ``LifecycleOwner/scopeLifecycle``; see ``ScopeLifecycle/detachChild(_:)``.
  ///
  /// ```swift
  /// flow.detachChild(detail)
  /// ```
  /// - Parameter child: An attached owner.
  public func detachChild(_ child: any LifecycleOwner) {
    scopeLifecycle.detachChild(child)
  }
}
