extension LiveData {
  /// Observes the value for as long as `owner` lives and is active.
  ///
  /// If `owner` is a ``LifecycleOwner`` (or a ``ScopeLifecycle``, or a ``LifecycleDependent`` whose scope
  /// is set at registration), values arrive only while its scope is active, the latest undelivered version
  /// arrives when it becomes active again, and the observer is removed when the scope reaches
  /// ``LifecycleState/deinitialized``. Any other object counts as active while it is alive. The owner is
  /// never retained; once it is gone, the observer is removed and never called again.
  ///
  /// A store's value (`PersistentLiveData` and the shared store's) is kept alive by its observers: the
  /// store holds it weakly, and an observed one stays until its last observer goes, so
  /// `try store.liveData("k", default: 0).observe(owner: self) { … }` needs no reference of its own.
  ///
  /// ```swift
  /// viewModel.title.observe(owner: screen) { title in
  ///   header.text = title
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation.
  ///   - receiveCurrent: Deliver the current value right away if the owner is active. With `false`, the
  ///     current version is delivered only by a later ``dispatch()`` or reactivation, or replaced by the
  ///     next write.
  ///   - onChange: Called on the main actor with each delivered value.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe(
    owner: AnyObject, receiveCurrent: Bool = true, _ onChange: @escaping @MainActor (Value) -> Void
  ) -> Observer<Value> {
    let observer = Observer(update: onChange)
    register(observer, owner: owner, receiveCurrent: receiveCurrent)
    return observer
  }

  /// Observes the value for as long as `owner` lives and is active, passing the owner to the callback so
  /// that it need not be captured.
  ///
  /// The same rules as ``observe(owner:receiveCurrent:_:)-(AnyObject,_,_)`` apply; the callback is not
  /// called once the owner is gone.
  ///
  /// ```swift
  /// counter.observe(owner: self) { screen, count in
  ///   screen.badge = count   // no [weak self] needed
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - receiveCurrent: Deliver the current value right away if the owner is active.
  ///   - onChange: Called on the main actor with the owner and each delivered value.
  /// - Returns: The observer; cancel it to stop early.
  @MainActor @discardableResult
  public func observe<Owner: AnyObject>(
    owner: Owner, receiveCurrent: Bool = true,
    _ onChange: @escaping @MainActor (Owner, Value) -> Void
  ) -> Observer<Value> {
    let observer = Observer<Value>.passingOwner(owner, onChange)
    register(observer, owner: owner, receiveCurrent: receiveCurrent)
    return observer
  }

  /// Registers an existing observer bound to `owner`.
  ///
  /// ```swift
  /// let observer = Observer<Int> { print($0) }
  /// data.observe(owner: screen, observer: observer)   // true
  /// data.observe(owner: screen, observer: observer)   // false: already registered
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - observer: The observer to add; the current value is delivered if the owner is active.
  /// - Returns: `false` if the observer is already registered here (or was cancelled).
  @MainActor @discardableResult
  public func observe(owner: AnyObject, observer: Observer<Value>) -> Bool {
    register(observer, owner: owner, receiveCurrent: true)
  }

  /// Observes the value until the observer is removed or cancelled, whatever any lifecycle does.
  ///
  /// A forever observer is always active, so it keeps the LiveData active (see ``onActive()``).
  ///
  /// ```swift
  /// let observer = settings.observeForever { settings in apply(settings) }
  /// // …
  /// observer.cancel()
  /// ```
  /// - Parameters:
  ///   - receiveCurrent: Deliver the current value right away.
  ///   - onChange: Called on the main actor with each delivered value.
  /// - Returns: The observer; remove or cancel it to stop.
  @MainActor @discardableResult
  public func observeForever(
    receiveCurrent: Bool = true, _ onChange: @escaping @MainActor (Value) -> Void
  ) -> Observer<Value> {
    let observer = Observer(update: onChange)
    register(observer, owner: nil, receiveCurrent: receiveCurrent)
    return observer
  }

  /// Registers an existing observer with no owner.
  ///
  /// ```swift
  /// let logger = Observer<Settings> { log("settings: \($0)") }
  /// settings.observeForever(observer: logger)   // true
  /// ```
  /// - Parameter observer: The observer to add; it receives the current value at once.
  /// - Returns: `false` if the observer is already registered here (or was cancelled).
  @MainActor @discardableResult
  public func observeForever(observer: Observer<Value>) -> Bool {
    register(observer, owner: nil, receiveCurrent: true)
  }

  /// Removes an observer.
  ///
  /// ```swift
  /// data.remove(observer: observer)   // true
  /// data.remove(observer: observer)   // false: no longer there
  /// ```
  /// - Parameter observer: The observer to remove.
  /// - Returns: `false` if it was not registered here.
  @MainActor @discardableResult
  public func remove(observer: Observer<Value>) -> Bool {
    existingRegistry?.remove(observer) != nil
  }

  /// Removes every observer bound to `owner`.
  ///
  /// ```swift
  /// data.removeObservers(owner: screen)
  /// ```
  /// - Parameter owner: The owner whose observers go.
  @MainActor public func removeObservers(owner: AnyObject) {
    existingRegistry?.removeAll { $0.owner === owner }
  }

  /// Removes every observer.
  ///
  /// ```swift
  /// data.removeAllObservers()
  /// data.hasObservers   // false
  /// ```
  @MainActor public func removeAllObservers() {
    existingRegistry?.removeAll { _ in true }
  }

  /// Whether any observer is registered. Observers whose owner is gone or that were cancelled do not
  /// count; they are removed when this is read.
  ///
  /// ```swift
  /// if !data.hasObservers { cache.evict(data) }
  /// ```
  @MainActor public var hasObservers: Bool {
    guard let registry = existingRegistry else { return false }
    registry.pruneDeadEntries()
    return registry.liveEntryCount > 0
  }

  /// Whether any registered observer is active (its owner's scope is active, or it has no lifecycle).
  ///
  /// ```swift
  /// data.hasActiveObservers   // false until an active owner observes
  /// ```
  @MainActor public var hasActiveObservers: Bool {
    guard let registry = existingRegistry else { return false }
    registry.pruneDeadEntries()
    return registry.hasActiveEntries
  }

  @MainActor @discardableResult
  package func register(_ observer: Observer<Value>, owner: AnyObject?, receiveCurrent: Bool) -> Bool {
    registry.register(
      observer, owner: owner, deliversCurrent: receiveCurrent, deliveredVersion: -1,
      keepingAlive: heldByObservingLifecycles)
      != nil
  }

  /// Registers an internal observer that has already seen `deliveredVersion` (used by transformations,
  /// which compute their first value eagerly).
  @MainActor
  func observeForever(observer: Observer<Value>, deliveredVersion: Int64) {
    registry.register(observer, owner: nil, deliversCurrent: true, deliveredVersion: deliveredVersion)
  }

  /// Removes an internal observer and returns the last version it received.
  @MainActor
  func removeReturningDeliveredVersion(_ observer: Observer<Value>) -> Int64? {
    existingRegistry?.remove(observer)?.deliveredVersion
  }
}
