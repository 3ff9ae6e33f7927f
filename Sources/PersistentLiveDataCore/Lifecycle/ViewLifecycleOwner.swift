/// An object that has a ``ViewLifecycle``: a view controller, a SwiftUI view model.
///
/// ```swift
/// final class ProfileViewController: ViewLifecycleOwner {
///   let viewLifecycle = ViewLifecycle()
/// }
/// ```
@MainActor public protocol ViewLifecycleOwner: AnyObject {
  /// The view lifecycle of this owner. Return the same instance every time.
  ///
  /// ```swift
  /// let viewLifecycle = ViewLifecycle()
  /// ```
  var viewLifecycle: ViewLifecycle { get }
}
