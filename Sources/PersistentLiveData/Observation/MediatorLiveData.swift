/// A ``MutableLiveData`` that observes other LiveData and reacts to their changes.
///
/// Sources are observed only while the mediator itself has active observers, so an unobserved mediator
/// costs nothing and keeps nothing running. When it becomes active again, each source delivers the
/// versions the mediator has not seen yet.
///
/// ```swift
/// let fullName = MediatorLiveData("")
/// fullName.addSource(firstName) { _ in fullName.set("\(firstName.value) \(lastName.value)") }
/// fullName.addSource(lastName) { _ in fullName.set("\(firstName.value) \(lastName.value)") }
/// fullName.observe(owner: screen) { header.text = $0 }
/// ```
///
/// Subclasses that override ``LiveData/onActive()`` or ``LiveData/onInactive()`` must call `super`.
open class MediatorLiveData<Value: Sendable>: MutableLiveData<Value>, @unchecked Sendable {
  /// Sources in the order they were added; main-actor state.
  private var sources: [MediatorSource] = []
  private var isPlugged = false

  /// Starts observing `source` whenever this mediator is active, calling `onChanged` with its values.
  ///
  /// Adding a source that is already added does nothing (the first `onChanged` stays).
  ///
  /// ```swift
  /// let errors = MediatorLiveData<String?>()
  /// errors.addSource(network.lastError) { errors.set($0?.localizedDescription) }
  /// ```
  /// - Parameters:
  ///   - source: The LiveData to observe; the mediator keeps it alive until it is removed.
  ///   - onChanged: Called on the main actor with each new version of the source.
  @MainActor public func addSource<S: Sendable>(
    _ source: LiveData<S>, onChanged: @escaping @MainActor (S) -> Void
  ) {
    addSource(source, deliveredVersion: -1, onChanged: onChanged)
  }

  /// Adds a source that has already been consumed up to `deliveredVersion`.
  @MainActor func addSource<S: Sendable>(
    _ source: LiveData<S>, deliveredVersion: Int64, onChanged: @escaping @MainActor (S) -> Void
  ) {
    guard !sources.contains(where: { $0.source === source }) else { return }
    let link = MediatorSource(source: source, deliveredVersion: deliveredVersion, onChanged: onChanged)
    sources.append(link)
    if hasActiveObservers { link.plug() }
  }

  /// Stops observing `source`.
  ///
  /// ```swift
  /// results.removeSource(oldQuery)
  /// ```
  /// - Parameter source: A source added with ``addSource(_:onChanged:)``; others are ignored.
  @MainActor public func removeSource<S: Sendable>(_ source: LiveData<S>) {
    guard let position = sources.firstIndex(where: { $0.source === source }) else { return }
    let link = sources.remove(at: position)
    link.unplug()
  }

  /// Starts observing the sources. Overrides must call `super.onActive()`.
  ///
  /// ```swift
  /// override func onActive() { super.onActive(); startTimer() }
  /// ```
  @MainActor open override func onActive() {
    isPlugged = true
    for link in sources where isPlugged { link.plug() }
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
}

/// One source of a mediator, type-erased: it can plug (observe forever) and unplug, remembering the last
/// version delivered so that replugging only delivers what is new.
@MainActor
final class MediatorSource {
  let source: AnyObject
  private let plugAction: @MainActor (Int64) -> Void
  private let unplugAction: @MainActor () -> Int64?
  private var deliveredVersion: Int64
  private var isPlugged = false

  init<S: Sendable>(
    source: LiveData<S>, deliveredVersion: Int64, onChanged: @escaping @MainActor (S) -> Void
  ) {
    self.source = source
    self.deliveredVersion = deliveredVersion
    let observer = Observer<S>(update: onChanged)
    plugAction = { version in source.observeForever(observer: observer, deliveredVersion: version) }
    unplugAction = { source.removeReturningDeliveredVersion(observer) }
  }

  func plug() {
    guard !isPlugged else { return }
    isPlugged = true
    plugAction(deliveredVersion)
  }

  func unplug() {
    guard isPlugged else { return }
    isPlugged = false
    if let version = unplugAction() { deliveredVersion = version }
  }
}
