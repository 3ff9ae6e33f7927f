/// A stream of stateless events: each trigger reaches the observers that are active at that moment, and
/// nothing is replayed to observers that come later.
///
/// Use it for things that happen rather than things that are: "show this message", "navigate there".
///
/// ```swift
/// let showToast = FutureEvent<String>()
/// showToast.observe(owner: screen) { message in toast.show(message) }
/// showToast.trigger("Saved")
/// ```
public final class FutureEvent<Action: Sendable>: Sendable {
  private let channel = EventChannel<Action>()

  /// Creates an event with no observers.
  ///
  /// ```swift
  /// let didLogOut = FutureEvent<Void>()
  /// ```
  public init() {}

  /// Sends `action` to every active observer.
  ///
  /// On the main actor, observers are called before this returns; from elsewhere, delivery is scheduled
  /// on the main actor, in trigger order, with no action dropped.
  ///
  /// ```swift
  /// errors.trigger(.networkUnavailable)
  /// ```
  /// - Parameters:
  ///   - action: The event payload.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  public func trigger(_ action: Action, isolation: isolated (any Actor)? = #isolation) {
    channel.send(action, isolation: isolation)
  }

  /// Sends a payload-free event.
  ///
  /// ```swift
  /// let refresh = FutureEvent<Void>()
  /// refresh.trigger()
  /// ```
  /// - Parameter isolation: The caller's isolation, filled in by the compiler.
  public func trigger(isolation: isolated (any Actor)? = #isolation) where Action == Void {
    channel.send((), isolation: isolation)
  }

  /// Observes the events triggered while `owner` is alive and active.
  ///
  /// ```swift
  /// navigate.observe(owner: screen) { route in router.go(to: route) }
  /// ```
  /// - Parameters:
  ///   - owner: A ``LifecycleOwner`` (events arrive only while its scope is active) or any object
  ///     (while alive); held weakly.
  ///   - onEvent: Called on the main actor with each event.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe(owner: AnyObject, _ onEvent: @escaping @MainActor (Action) -> Void) -> Observer<Action>
  {
    let observer = Observer(update: onEvent)
    _ = channel.register(observer, owner: owner)
    return observer
  }

  /// Observes the events triggered while `owner` is alive and active, passing the owner to the callback.
  ///
  /// ```swift
  /// showAlert.observe(owner: self) { screen, text in screen.present(text) }
  /// ```
  /// - Parameters:
  ///   - owner: The owner, held weakly.
  ///   - onEvent: Called on the main actor with the owner and each event.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe<Owner: AnyObject>(
    owner: Owner, _ onEvent: @escaping @MainActor (Owner, Action) -> Void
  ) -> Observer<Action> {
    let observer = Observer<Action>.passingOwner(owner, onEvent)
    _ = channel.register(observer, owner: owner)
    return observer
  }

  /// Observes every event until the observer is removed or cancelled.
  ///
  /// ```swift
  /// let token = analytics.observeForever { event in log(event) }
  /// ```
  /// - Parameter onEvent: Called on the main actor with each event.
  /// - Returns: The observer; cancel it to stop.
  @MainActor @discardableResult
  public func observeForever(_ onEvent: @escaping @MainActor (Action) -> Void) -> Observer<Action> {
    let observer = Observer(update: onEvent)
    _ = channel.register(observer, owner: nil)
    return observer
  }

  /// Removes an observer.
  ///
  /// ```swift
  /// event.remove(observer: token)   // false if it was not registered
  /// ```
  /// - Parameter observer: The observer to remove.
  /// - Returns: `false` if it was not registered here.
  @MainActor @discardableResult
  public func remove(observer: Observer<Action>) -> Bool {
    channel.registry.remove(observer) != nil
  }

  /// Removes every observer bound to `owner`.
  ///
  /// ```swift
  /// event.removeObservers(owner: screen)
  /// ```
  /// - Parameter owner: The owner whose observers go.
  @MainActor public func removeObservers(owner: AnyObject) {
    channel.registry.removeAll { $0.owner === owner }
  }

  /// Whether any observer is registered (observers whose owner is gone do not count).
  ///
  /// ```swift
  /// if event.hasObservers { event.trigger(payload) }
  /// ```
  @MainActor public var hasObservers: Bool {
    channel.registry.pruneDeadEntries()
    return channel.registry.liveEntryCount > 0
  }
}
