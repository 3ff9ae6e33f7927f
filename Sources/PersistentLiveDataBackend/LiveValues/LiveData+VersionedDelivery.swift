extension LiveData {
  /// Registers an observer that receives each delivered version as a ``Versioned`` — value, version and
  /// commit time that belong together — under the ordinary delivery rules; the backends' public
  /// `observeVersioned` methods are built on it.
  ///
  /// **How the pairing is guaranteed.** The observer ignores the value the dispatch hands it and reads
  /// ``snapshot`` instead: value and version are one struct under one lock (`LiveDataStorage`), written
  /// together by ``advance(to:version:onMainActor:)`` — the only way a store moves memory (its own writes,
  /// rollbacks, resets, removals, other processes' and replicas' writes). So the value delivered is always
  /// the value *of* the version delivered, even when a write made on another thread lands between the
  /// dispatch's read and this callback. The commit time is then looked up *by that version* in
  /// `commitTimes`, where backends record it before memory moves.
  ///
  /// **Delivery rules.** The registry decides when the callback runs (owner active, removal at
  /// `.deinitialized`, latest version on reactivation); the observer delivers a version only if it is
  /// newer than the last one it delivered, so a snapshot that ran ahead of the dispatch (it delivered a
  /// newer version than the dispatch read) is not delivered a second time when that version's own
  /// dispatch comes. When no commit time can be had at once (a server must be asked), the observer
  /// declines: it hands its registry entry back the version it last delivered — so the registry offers
  /// the current version again, on reactivation too — and delivers once the time is fetched.
  ///
  /// ```swift
  /// let observer = registerVersioned(owner: screen, receiveCurrent: true, commitTimes: commitTimes) {
  ///   print($0.version, $0.value, $0.writtenAt)
  /// }
  /// ```
  /// - Parameters:
  ///   - owner: The owner (nil: forever), as for ``observe(owner:receiveCurrent:_:)-(AnyObject,_,_)``.
  ///   - receiveCurrent: Deliver the current version right away if the observer is active.
  ///   - commitTimes: The live value's ledger of commit times.
  ///   - onChange: Called on the main actor with each delivered version.
  /// - Returns: The observer registered here; remove or cancel it to stop.
  @MainActor
  func registerVersioned(
    owner: AnyObject?, receiveCurrent: Bool, commitTimes: CommitTimes,
    _ onChange: @escaping @MainActor (Versioned<Value>) -> Void
  ) -> Observer<Value> {
    let delivery = VersionedDelivery(commitTimes: commitTimes, onChange: onChange)
    let observer = Observer<Value> { [weak self] _ in
      guard let self else { return }
      delivery.deliver(from: self)
    }
    delivery.observer = observer
    register(observer, owner: owner, receiveCurrent: receiveCurrent)
    return observer
  }
}

/// The state of one versioned observer: the last version it delivered.
@MainActor final class VersionedDelivery<Value: Sendable> {
  private let commitTimes: CommitTimes
  private let onChange: @MainActor (Versioned<Value>) -> Void
  /// The observer that calls this delivery; weak, since the observer holds the delivery.
  weak var observer: Observer<Value>?
  private var lastDelivered: Int64 = -1

  init(commitTimes: CommitTimes, onChange: @escaping @MainActor (Versioned<Value>) -> Void) {
    self.commitTimes = commitTimes
    self.onChange = onChange
  }

  /// Delivers the current version of `data` if it is newer than the last one delivered.
  func deliver(from data: LiveData<Value>) {
    let (value, version) = data.snapshot
    guard version >= 0, version > lastDelivered else { return }
    if let writtenAt = commitTimes.known(version) {
      lastDelivered = version
      onChange(
        Versioned(
          version: version, value: value, writtenAt: writtenAt,
          attribution: commitTimes.attribution(of: version)))
      return
    }
    // Not delivered: the registry must offer the current version again (now, after the fetch, or on
    // reactivation if the owner is inactive by then).
    if let observer, let entry = data.existingRegistry?.entry(for: observer) {
      entry.deliveredVersion = min(entry.deliveredVersion, lastDelivered)
    }
    commitTimes.fetch(version) { [weak data] in
      data?.snapshot.version == version
    } then: { [weak data] in
      data?.dispatch()
    }
  }
}
