/// The lifecycle of a view, independent of any UI framework: loaded once, then displayed and hidden.
///
/// A platform adapter (a UIKit view controller, a SwiftUI `onAppear`/`onDisappear` pair) calls
/// ``viewDidLoad()`` and sets ``isDisplayed``; subscribers receive `viewDidLoad`, `viewDidAppear` and
/// `viewDidDisappear`. ``state`` is ``LifecycleState/initialized`` until the view is first displayed,
/// ``LifecycleState/active`` while it is displayed and ``LifecycleState/inactive`` after it disappeared.
///
/// Both inputs are forgiving: ``viewDidLoad()`` runs once however often it is called, repeated values of
/// ``isDisplayed`` are ignored, and displaying a view that was never loaded loads it first. Subscribers are
/// held weakly and are called in subscription order.
///
/// ```swift
/// let lifecycle = ViewLifecycle()
/// lifecycle.subscribe(tracker)
/// lifecycle.viewDidLoad()          // tracker.viewDidLoad()
/// lifecycle.isDisplayed = true     // tracker.viewDidAppear()
/// lifecycle.isDisplayed = true     // nothing: already displayed
/// lifecycle.isDisplayed = false    // tracker.viewDidDisappear()
/// ```
@MainActor public final class ViewLifecycle {
  /// ``LifecycleState/initialized`` until first displayed, ``LifecycleState/active`` while displayed,
  /// ``LifecycleState/inactive`` once hidden again.
  ///
  /// ```swift
  /// lifecycle.isDisplayed = true
  /// lifecycle.state   // .active
  /// ```
  public private(set) var state: LifecycleState = .initialized

  /// Whether ``viewDidLoad()`` has run.
  ///
  /// ```swift
  /// lifecycle.viewDidLoad()
  /// lifecycle.isLoaded   // true
  /// ```
  public private(set) var isLoaded = false

  private var displayed = false
  private var subscribers: [ViewSubscriberEntry] = []

  /// Creates a view lifecycle that is neither loaded nor displayed.
  ///
  /// ```swift
  /// let lifecycle = ViewLifecycle()
  /// lifecycle.state   // .initialized
  /// ```
  public init() {}

  /// Marks the view as loaded and calls `viewDidLoad` on the subscribers. Later calls do nothing.
  ///
  /// ```swift
  /// override func viewDidLoad() {
  ///   super.viewDidLoad()
  ///   viewLifecycle.viewDidLoad()
  /// }
  /// ```
  public func viewDidLoad() {
    guard !isLoaded else { return }
    isLoaded = true
    for entry in subscribers {
      guard let subscriber = entry.subscriber, !entry.hasLoaded else { continue }
      entry.hasLoaded = true
      subscriber.viewDidLoad()
    }
    subscribers.removeAll { $0.subscriber == nil }
  }

  /// Whether the view is on screen. Setting it calls `viewDidAppear` or `viewDidDisappear` on the
  /// subscribers, only when the value changes.
  ///
  /// Setting `true` on a view that was never loaded calls ``viewDidLoad()`` first. Setting `false` on a
  /// view that was never displayed does nothing.
  ///
  /// ```swift
  /// .onAppear { viewLifecycle.isDisplayed = true }
  /// .onDisappear { viewLifecycle.isDisplayed = false }
  /// ```
  public var isDisplayed: Bool {
    get { displayed }
    set { newValue ? appear() : disappear() }
  }

  /// Adds a subscriber, held weakly, and replays what it missed: `viewDidLoad` if the view is loaded, then
  /// `viewDidAppear` if it is displayed. Subscribing the same object again does nothing.
  ///
  /// ```swift
  /// lifecycle.isDisplayed = true
  /// lifecycle.subscribe(tracker)   // tracker.viewDidLoad(), tracker.viewDidAppear()
  /// ```
  /// - Parameter subscriber: The object to notify. The lifecycle does not keep it alive.
  public func subscribe(_ subscriber: any ViewLifecycleSubscriber) {
    subscribers.removeAll { $0.subscriber == nil }
    guard !subscribers.contains(where: { $0.subscriber === subscriber }) else { return }
    let entry = ViewSubscriberEntry(subscriber)
    subscribers.append(entry)
    guard isLoaded else { return }
    entry.hasLoaded = true
    subscriber.viewDidLoad()
    guard displayed, !entry.hasAppeared else { return }
    entry.hasAppeared = true
    subscriber.viewDidAppear()
  }

  private func appear() {
    guard !displayed else { return }
    viewDidLoad()
    // A viewDidLoad callback may have displayed the view already.
    guard !displayed else { return }
    displayed = true
    state = .active
    for entry in subscribers {
      guard let subscriber = entry.subscriber else { continue }
      if !entry.hasLoaded {
        entry.hasLoaded = true
        subscriber.viewDidLoad()
      }
      guard displayed else { return }
      guard !entry.hasAppeared else { continue }
      entry.hasAppeared = true
      subscriber.viewDidAppear()
    }
    subscribers.removeAll { $0.subscriber == nil }
  }

  private func disappear() {
    guard displayed else { return }
    displayed = false
    state = .inactive
    for entry in subscribers {
      guard let subscriber = entry.subscriber, entry.hasAppeared else { continue }
      guard !displayed else { return }
      entry.hasAppeared = false
      subscriber.viewDidDisappear()
    }
    subscribers.removeAll { $0.subscriber == nil }
  }
}

/// A weakly held view subscriber and what it has been told so far.
@MainActor private final class ViewSubscriberEntry {
  weak var subscriber: (any ViewLifecycleSubscriber)?
  /// `viewDidLoad` was called.
  var hasLoaded = false
  /// `viewDidAppear` was called and `viewDidDisappear` not yet.
  var hasAppeared = false

  init(_ subscriber: any ViewLifecycleSubscriber) {
    self.subscriber = subscriber
  }
}
