/// An object that works within a ``ScopeLifecycle`` it does not own, such as a view model used by a screen.
///
/// Store the lifecycle **weakly**: the owner keeps its lifecycle alive, and a strong reference from a
/// dependent the owner holds would form a retain cycle. The property is `nil` once the scope is gone.
///
/// ```swift
/// final class ProfileViewModel: LifecycleDependent {
///   weak var scopeLifecycle: ScopeLifecycle?
///
///   init(scopeLifecycle: ScopeLifecycle) { self.scopeLifecycle = scopeLifecycle }
/// }
/// ```
@MainActor public protocol LifecycleDependent: AnyObject {
  /// The lifecycle this object depends on, held weakly; `nil` once it has been released.
  ///
  /// ```swift
  /// weak var scopeLifecycle: ScopeLifecycle?
  /// ```
  var scopeLifecycle: ScopeLifecycle? { get }
}
