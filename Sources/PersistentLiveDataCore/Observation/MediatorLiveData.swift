/// A ``MutableLiveData`` that observes other LiveData and reacts to their changes.
///
/// Sources are observed only while the mediator itself has active observers, so an unobserved mediator
/// costs nothing and keeps nothing running. When it becomes active again, each source delivers the
/// versions the mediator has not seen yet.
///
/// A mediator nobody references lives as long as it is observed, as on Android: while it has active
/// observers its sources hold it, and a ``LifecycleOwner`` observing it holds it (and its sources) until the
/// observer is removed. Capture the mediator weakly in `onChanged`: the mediator holds that closure.
///
/// ```swift
/// let fullName = MediatorLiveData("")
/// let update: @MainActor (String) -> Void = { [weak fullName] _ in
///   fullName?.set("\(firstName.value) \(lastName.value)")
/// }
/// fullName.addSource(firstName, onChanged: update)
/// fullName.addSource(lastName, onChanged: update)
/// fullName.observe(owner: screen) { header.text = $0 }
/// ```
///
/// Subclasses that override ``LiveData/onActive()`` or ``LiveData/onInactive()`` must call `super`.
// Sendable as LiveData is: the mediator's own state is main-actor isolated.
open class MediatorLiveData<Value: Sendable>: MutableLiveData<Value>, @unchecked Sendable {
  /// Sources in the order they were added.
  @MainActor private var sources: [any MediatorSourceLink] = []
  @MainActor private var isPlugged = false
  /// How many holders keep this mediator alive through a lifecycle: its own lifecycle-bound observers
  /// (counted once) and each mediator held that way which has it as a source.
  @MainActor private var lifecycleHolds = 0

  /// Starts observing `source` whenever this mediator is active, calling `onChanged` with its values.
  ///
  /// Adding a source that is already added does nothing (the first `onChanged` stays).
  ///
  /// ```swift
  /// let errors = MediatorLiveData<String?>()
  /// errors.addSource(network.lastError) { [weak errors] in errors?.set($0?.localizedDescription) }
  /// ```
  /// - Parameters:
  ///   - source: The LiveData to observe. While the mediator has active observers the source holds the
  ///     mediator, and the mediator holds the source only if a lifecycle owner observes it (a chain whose
  ///     root nobody holds any more is released); otherwise the mediator keeps it alive until it is removed.
  ///   - onChanged: Called on the main actor with each new version of the source. It should not capture
  ///     the mediator strongly, or the mediator is never released.
  @MainActor public func addSource<S: Sendable>(
    _ source: LiveData<S>, onChanged: @escaping @MainActor (S) -> Void
  ) {
    addSource(source, deliveredVersion: -1, onChanged: onChanged)
  }

  /// Adds a source that has already been consumed up to `deliveredVersion`.
  @MainActor func addSource<S: Sendable>(
    _ source: LiveData<S>, deliveredVersion: Int64, onChanged: @escaping @MainActor (S) -> Void
  ) {
    let id = ObjectIdentifier(source)
    guard !sources.contains(where: { $0.sourceID == id }) else { return }
    let link = MediatorSource(source: source, deliveredVersion: deliveredVersion, onChanged: onChanged)
    sources.append(link)
    if lifecycleHolds > 0 { link.setHeldByLifecycle(true) }
    if hasActiveObservers { link.plug(into: self) }
  }

  /// Stops observing `source`.
  ///
  /// ```swift
  /// results.removeSource(oldQuery)
  /// ```
  /// - Parameter source: A source added with ``addSource(_:onChanged:)``; others are ignored.
  @MainActor public func removeSource<S: Sendable>(_ source: LiveData<S>) {
    removeSource(id: ObjectIdentifier(source))
  }

  /// Stops observing the source with identity `id`, if it is one.
  @MainActor func removeSource(id: ObjectIdentifier) {
    guard let position = sources.firstIndex(where: { $0.sourceID == id }) else { return }
    let link = sources.remove(at: position)
    link.unplug()
    link.setHeldByLifecycle(false)
  }

  /// Starts observing the sources. Overrides must call `super.onActive()`.
  ///
  /// ```swift
  /// override func onActive() { super.onActive(); startTimer() }
  /// ```
  @MainActor open override func onActive() {
    isPlugged = true
    for link in sources where isPlugged { link.plug(into: self) }
  }

  /// Stops observing the sources. Overrides must call `super.onInactive()`.
  ///
  /// ```swift
  /// override func onInactive() { super.onInactive(); stopTimer() }
  /// ```
  @MainActor open override func onInactive() {
    isPlugged = false
    for link in sources { link.unplug() }
  }

  /// The mediator itself: the scope of a lifecycle owner observing it keeps it alive.
  @MainActor override var heldByObservingLifecycles: (any AnyObject & Sendable)? { self }

  /// Passes a lifecycle's hold on to the sources, so that a chain observed by a lifecycle owner keeps
  /// every LiveData it is built from.
  @MainActor override func lifecycleHoldDidChange(_ held: Bool) {
    changeLifecycleHolds(by: held ? 1 : -1)
  }

  @MainActor func changeLifecycleHolds(by change: Int) {
    let wasHeld = lifecycleHolds > 0
    lifecycleHolds += change
    let isHeld = lifecycleHolds > 0
    guard isHeld != wasHeld else { return }
    for link in sources { link.setHeldByLifecycle(isHeld) }
  }
}
