public import PersistentLiveData

extension SharedLiveData {
  /// Observes the value together with its version and commit time, for as long as `owner` lives and is
  /// active.
  ///
  /// The same rules as `LiveData.observe(owner:receiveCurrent:_:)`: values arrive only while a
  /// `LifecycleOwner`'s scope is active, each version at most once, the latest undelivered version when
  /// the scope becomes active again, and the observer is removed when the scope reaches `.deinitialized`
  /// or the owner is gone. Each `Versioned` holds exactly one version: its value is the value of that
  /// version, also when other replicas' writes coalesce (the latest value arrives with the latest
  /// version) and after a rollback.
  ///
  /// `writtenAt` is when the version was committed on the server, as ``history(limit:)`` reads it;
  /// version 0 — the default, before any replica wrote — has `Date(timeIntervalSince1970: 0)`. This
  /// replica knows the commit time of every version it wrote with ``set(_:isolation:)``,
  /// ``update(isolation:_:)`` or ``rollback(to:isolation:)`` and of every version it received from
  /// another replica. For a version it has not seen committed — the one
  /// ``PostgresStore/liveData(_:default:)`` started from, one written by
  /// ``PostgresStore/transaction(isolation:_:)`` — the time is read from the server first, so that
  /// version arrives a round trip later (still at most once, and not if a newer one came meanwhile).
  ///
  /// ```swift
  /// let flags = try await store.liveData("feature-flags", default: FeatureFlags())
  /// flags.observeVersioned(owner: screen) { change in
  ///   print("v\(change.version) from \(change.writtenAt): \(change.value)")
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - receiveCurrent: Deliver the current version right away if the owner is active.
  ///   - onChange: Called on the main actor with each delivered version.
  /// - Returns: The observer; cancel it, or pass it to `remove(observer:)`, to stop early. It reports
  ///   this live value's versions: do not register it with another LiveData.
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
  /// flags.observeVersioned(owner: self) { screen, change in
  ///   screen.status = "flags v\(change.version)"
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The object whose lifetime (and lifecycle) bounds the observation; held weakly.
  ///   - receiveCurrent: Deliver the current version right away if the owner is active.
  ///   - onChange: Called on the main actor with the owner and each delivered version.
  /// - Returns: The observer; cancel it, or pass it to `remove(observer:)`, to stop early.
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
  /// let observer = flags.observeVersionedForever { change in
  ///   logger.info("feature flags v\(change.version), written \(change.writtenAt)")
  /// }
  /// // …
  /// observer.cancel()
  /// ```
  /// - Parameters:
  ///   - receiveCurrent: Deliver the current version right away.
  ///   - onChange: Called on the main actor with each delivered version.
  /// - Returns: The observer; cancel it, or pass it to `remove(observer:)`, to stop.
  @MainActor @discardableResult
  public func observeVersionedForever(
    receiveCurrent: Bool = true, _ onChange: @escaping @MainActor (Versioned<Value>) -> Void
  ) -> Observer<Value> {
    registerVersioned(owner: nil, receiveCurrent: receiveCurrent, commitTimes: commitTimes, onChange)
  }
}
