extension LiveData {
  /// Delivers the current version to every active observer that has not received it yet.
  ///
  /// Idempotent: a second call delivers nothing new. Writes already dispatch on their own; call this
  /// after registering with `receiveCurrent: false` to hand the current value out after all.
  ///
  /// ```swift
  /// data.observeForever(receiveCurrent: false) { print($0) }   // nothing yet
  /// data.dispatch()                                            // prints the current value
  /// data.dispatch()                                            // nothing
  /// ```
  @MainActor public func dispatch() {
    dispatch(entry: nil)
  }

  /// Delivers the current version to one observer, if it is registered, active and has not received it.
  ///
  /// Does nothing for an observer that is not registered here.
  ///
  /// ```swift
  /// let observer = Observer<Int> { print($0) }
  /// data.observeForever(observer: observer)
  /// data.dispatch(initiator: observer)   // nothing: it already has the current version
  /// ```
  /// - Parameter initiator: The observer to catch up.
  @MainActor public func dispatch(initiator: Observer<Value>) {
    guard let entry = existingRegistry?.entry(for: initiator) else { return }
    dispatch(entry: entry)
  }

  /// The dispatch loop. With an entry, catches up that one; without, every active observer. A write made
  /// by a callback restarts the loop, so every observer ends on the newest version exactly once and
  /// observers after the writer never see the intermediate one. Each pass first announces its version to
  /// Observation (once per version: see `announceToObservation(_:)`), with or without observers.
  @MainActor func dispatch(entry initiator: ObserverEntry<Value>?) {
    if isDispatching {
      dispatchInvalidated = true
      return
    }
    guard let registry = existingRegistry else {
      announceToObservation(storage.withLock { $0.version })
      return
    }
    isDispatching = true
    defer { isDispatching = false }
    var initiator = initiator
    repeat {
      dispatchInvalidated = false
      let (value, version) = storage.withLock { ($0.value, $0.version) }
      // Observation hears of the version first; an `onChange` that writes restarts the loop.
      announceToObservation(version)
      if dispatchInvalidated { continue }
      if let entry = initiator {
        notify(entry, value, version)
        initiator = nil
        continue
      }
      registry.beginIteration()
      defer { registry.endIteration() }
      // Iterate over a snapshot of the array (no exclusivity check per element); entries registered by a
      // callback are appended to the live array and picked up by the next snapshot.
      var start = 0
      passes: while true {
        let entries = registry.entries
        guard start < entries.count else { break }
        for position in start..<entries.count {
          notify(entries[position], value, version)
          if dispatchInvalidated { break passes }
        }
        start = entries.count
      }
    } while dispatchInvalidated
  }

  @MainActor @inline(__always)
  private func notify(_ entry: ObserverEntry<Value>, _ value: Value, _ version: Int64) {
    guard entry.isActive, entry.deliveredVersion < version else { return }
    if entry.isDead {
      registry.remove(entry)
      return
    }
    if entry.scopeIsNotActive {
      registry.deactivateUntilScopeIsActive(entry)
      return
    }
    entry.deliveredVersion = version
    entry.observer.update(value)
  }

  /// Notifies after a write: synchronously on the main actor, otherwise through the one main-actor
  /// dispatch that ``LiveDataStorage/commit(_:version:onMainActor:)`` asked for (coalescing to the latest).
  func notifyAfterWrite(onMainActor: Bool, mustSchedule: Bool) {
    if onMainActor {
      MainActor.assumeIsolated { dispatch() }
    } else if mustSchedule {
      Task { @MainActor [weak self] in self?.runScheduledDispatch() }
    }
  }

  /// The main-actor dispatch a write made off the main actor scheduled: later writes schedule again.
  @MainActor func runScheduledDispatch() {
    storage.withLock { $0.dispatchScheduled = false }
    dispatch()
  }
}
