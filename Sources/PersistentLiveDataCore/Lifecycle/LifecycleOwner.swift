/// An object that has a ``ScopeLifecycle``: a screen, a flow, a view model.
///
/// LiveData delivers to observers bound to a lifecycle owner only while its ``scopeLifecycle`` is active, and
/// removes them when it reaches ``LifecycleState/deinitialized``. Owners can be attached to each other as
/// children (see ``LifecycleOwnerRouting``).
///
/// ```swift
/// final class SettingsScreen: LifecycleOwner {
///   let scopeLifecycle = ScopeLifecycle()
/// }
/// ```
@MainActor public protocol LifecycleOwner: AnyObject {
  /// The lifecycle of this owner. Return the same instance every time; the owner keeps it alive.
  ///
  /// ```swift
  /// let scopeLifecycle = ScopeLifecycle()
  /// ```
  var scopeLifecycle: ScopeLifecycle { get }
}
