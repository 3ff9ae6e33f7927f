import Synchronization

/// An event that happens at most once: the first trigger reaches the observers active at that moment;
/// every later trigger is ignored and returns `false`.
///
/// Observing an event that has already been triggered delivers nothing. Nothing here ever crashes on
/// a repeated trigger.
///
/// ```swift
/// let finishedLoading = SingleEvent<Void>()
/// finishedLoading.observe(owner: splash) { _ in splash.dismiss() }
/// finishedLoading.trigger(())   // true
/// finishedLoading.trigger(())   // false
/// ```
public final class SingleEvent<Action: Sendable>: Sendable {
  private let channel = EventChannel<Action>(releasesObserversAfterDelivery: true)
  private let triggered = Atomic<Bool>(false)

  /// Creates an untriggered event.
  ///
  /// ```swift
  /// let onboardingDone = SingleEvent<Date>()
  /// ```
  public init() {}

  /// Whether the event has been triggered.
  ///
  /// ```swift
  /// if !ready.isTriggered { ready.trigger(()) }
  /// ```
  public var isTriggered: Bool { triggered.load(ordering: .acquiring) }

  /// Triggers the event if it has not been triggered yet.
  ///
  /// On the main actor, observers are called before this returns; from elsewhere, delivery is scheduled
  /// on the main actor. After delivery the observers are released: there is nothing more to deliver.
  ///
  /// ```swift
  /// let accepted = termsAccepted.trigger(Date())   // false if already accepted
  /// ```
  /// - Parameters:
  ///   - action: The payload.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Returns: `true` for the first trigger, `false` afterwards.
  @discardableResult
  public func trigger(_ action: Action, isolation: isolated (any Actor)? = #isolation) -> Bool {
    guard !triggered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
    channel.send(action, isolation: isolation)
    return true
  }

  /// Observes the event while `owner` is alive and active. Nothing is delivered if the event has
  /// already been triggered.
  ///
  /// ```swift
  /// loggedIn.observe(owner: screen) { user in screen.greet(user) }
  /// ```
  /// - Parameters:
  ///   - owner: A ``LifecycleOwner`` or any object; held weakly.
  ///   - onEvent: Called on the main actor with the payload.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe(owner: AnyObject, _ onEvent: @escaping @MainActor (Action) -> Void) -> Observer<Action>
  {
    let observer = Observer(update: onEvent)
    if !isTriggered { _ = channel.register(observer, owner: owner) }
    return observer
  }

  /// Observes the event while `owner` is alive and active, passing the owner to the callback.
  ///
  /// ```swift
  /// firstLaunch.observe(owner: self) { screen, _ in screen.showTour() }
  /// ```
  /// - Parameters:
  ///   - owner: The owner, held weakly.
  ///   - onEvent: Called on the main actor with the owner and the payload.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe<Owner: AnyObject>(
    owner: Owner, _ onEvent: @escaping @MainActor (Owner, Action) -> Void
  ) -> Observer<Action> {
    let observer = Observer<Action>.passingOwner(owner, onEvent)
    if !isTriggered { _ = channel.register(observer, owner: owner) }
    return observer
  }

  /// Observes the event until it fires or the observer is removed.
  ///
  /// ```swift
  /// shutdown.observeForever { reason in cleanUp(reason) }
  /// ```
  /// - Parameter onEvent: Called on the main actor with the payload.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observeForever(_ onEvent: @escaping @MainActor (Action) -> Void) -> Observer<Action> {
    let observer = Observer(update: onEvent)
    if !isTriggered { _ = channel.register(observer, owner: nil) }
    return observer
  }

  /// Removes an observer.
  ///
  /// ```swift
  /// ready.remove(observer: token)
  /// ```
  /// - Parameter observer: The observer to remove.
  /// - Returns: `false` if it was not registered here.
  @MainActor @discardableResult
  public func remove(observer: Observer<Action>) -> Bool {
    channel.registry.remove(observer) != nil
  }

  /// Whether any observer is waiting for the event.
  ///
  /// ```swift
  /// ready.hasObservers
  /// ```
  @MainActor public var hasObservers: Bool {
    channel.registry.pruneDeadEntries()
    return channel.registry.liveEntryCount > 0
  }
}
