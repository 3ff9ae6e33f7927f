/// An object told when a view loads, appears and disappears.
///
/// Subscribe with ``ViewLifecycle/subscribe(_:)``; the lifecycle holds the subscriber weakly. Every method
/// has an empty default implementation.
///
/// ```swift
/// final class ScreenTracker: ViewLifecycleSubscriber {
///   func viewDidAppear() { track("profile shown") }
/// }
/// ```
@MainActor public protocol ViewLifecycleSubscriber: AnyObject {
  /// Called once, when the view has loaded (or at once when subscribing to a loaded view).
  ///
  /// ```swift
  /// func viewDidLoad() { configure() }
  /// ```
  func viewDidLoad()

  /// Called each time the view is displayed (or at once when subscribing to a displayed view).
  ///
  /// ```swift
  /// func viewDidAppear() { startAnimations() }
  /// ```
  func viewDidAppear()

  /// Called each time the view stops being displayed, after a `viewDidAppear`.
  ///
  /// ```swift
  /// func viewDidDisappear() { stopAnimations() }
  /// ```
  func viewDidDisappear()
}

extension ViewLifecycleSubscriber {
  /// Does nothing; implement it to configure the view once.
  ///
  /// ```swift
  /// func viewDidLoad() {}
  /// ```
  public func viewDidLoad() {}

  /// Does nothing; implement it to react to each appearance.
  ///
  /// ```swift
  /// func viewDidAppear() {}
  /// ```
  public func viewDidAppear() {}

  /// Does nothing; implement it to react to each disappearance.
  ///
  /// ```swift
  /// func viewDidDisappear() {}
  /// ```
  public func viewDidDisappear() {}
}
