extension StoredLiveData {
  /// Observes the value together with its version and commit time, for as long as `owner` lives and is
  /// active.
  ///
  /// The same rules as ``/PersistentLiveDataCore/LiveData/observe(owner:receiveCurrent:_:)-(AnyObject,_,_)``:
  /// values arrive only while a ``/PersistentLiveDataCore/LifecycleOwner``'s scope is active, each version at
  /// most once, the latest undelivered version when the scope becomes active again, and the observer is
  /// removed when the scope reaches ``/PersistentLiveDataCore/LifecycleState/deinitialized`` or the owner is
  /// gone. Each ``Versioned`` holds exactly one version: its value is the value of that version, also when
  /// writes made elsewhere coalesce (the latest value arrives with the latest version), after a rollback, a
  /// reset or a removal of the key (the default, at the version the removal took), and another process's or
  /// replica's write.
  ///
  /// `writtenAt` is when the version was committed, as the store's history reads it. Version 0 — the
  /// default, before anything was written — has no commit: its `writtenAt` is
  /// `Date(timeIntervalSince1970: 0)`. A removal has no row: its `writtenAt` is when this process applied
  /// it (right after the commit for `PersistentStore/removeKey(_:)` here), or 1970 for a key found
  /// removed when the store handed out this live value. A shared store's replica knows the commit time of
  /// every version it wrote or received; for one it has not seen committed (the version it started from,
  /// one written in a transaction) the time is read from the server first, so that version arrives a
  /// round trip later (still at most once, and not if a newer one came meanwhile).
  ///
  /// ```swift
  /// let settings = try store.liveData("settings", default: Settings())
  /// settings.observeVersioned(owner: screen) { change in
  ///   print("v\(change.version), saved \(change.writtenAt): \(change.value)")
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - receiveCurrent: Deliver the current version right away if the owner is active.
  ///   - onChange: Called on the main actor with each delivered version.
  /// - Returns: The observer; cancel it, or pass it to
  /// ``/PersistentLiveDataCore/LiveData/remove(observer:)``, to stop early. It
  ///   reports this live value's versions: do not register it with another LiveData.
  @MainActor @discardableResult
  public func observeVersioned(
    owner: AnyObject, receiveCurrent: Bool = true,
    _ onChange: @escaping @MainActor (Versioned<Value>) -> Void
  ) -> Observer<Value> {
    registerVersioned(owner: owner, receiveCurrent: receiveCurrent, commitTimes: commitTimes, onChange)
  }

  /// Observes the value together with its version and commit time, passing the owner to the callback so
  /// that it need not be captured.
  ///
  /// The same rules as ``observeVersioned(owner:receiveCurrent:_:)-(AnyObject,_,_)`` apply; the callback
  /// is not called once the owner is gone.
  ///
  /// ```swift
  /// settings.observeVersioned(owner: self) { screen, change in
  ///   screen.footer = "Version \(change.version) — saved \(change.writtenAt)"
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - receiveCurrent: Deliver the current version right away if the owner is active.
  ///   - onChange: Called on the main actor with the owner and each delivered version.
  /// - Returns: The observer; cancel it, or pass it to
  /// ``/PersistentLiveDataCore/LiveData/remove(observer:)``, to stop early.
  @MainActor @discardableResult
  public func observeVersioned<Owner: AnyObject>(
    owner: Owner, receiveCurrent: Bool = true,
    _ onChange: @escaping @MainActor (Owner, Versioned<Value>) -> Void
  ) -> Observer<Value> {
    registerVersioned(owner: owner, receiveCurrent: receiveCurrent, commitTimes: commitTimes) {
      [weak owner] change in
      guard let owner else { return }
      onChange(owner, change)
    }
  }

  /// Observes the value together with its version and commit time until the observer is removed or
  /// cancelled, whatever any lifecycle does.
  ///
  /// The versions delivered follow the rules of ``observeVersioned(owner:receiveCurrent:_:)-(AnyObject,_,_)``
  /// for an owner that is always active.
  ///
  /// ```swift
  /// let observer = settings.observeVersionedForever { change in
  ///   log.info("settings v\(change.version) written at \(change.writtenAt)")
  /// }
  /// // …
  /// observer.cancel()
  /// ```
  /// - Parameters:
  ///   - receiveCurrent: Deliver the current version right away.
  ///   - onChange: Called on the main actor with each delivered version.
  /// - Returns: The observer; cancel it, or pass it to
  /// ``/PersistentLiveDataCore/LiveData/remove(observer:)``, to stop.
  @MainActor @discardableResult
  public func observeVersionedForever(
    receiveCurrent: Bool = true, _ onChange: @escaping @MainActor (Versioned<Value>) -> Void
  ) -> Observer<Value> {
    registerVersioned(owner: nil, receiveCurrent: receiveCurrent, commitTimes: commitTimes, onChange)
  }
}
