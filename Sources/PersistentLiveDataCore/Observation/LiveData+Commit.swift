extension LiveData: CommitNotifying {
  /// Moves ``value`` and ``version`` to a committed version — never backwards — and returns the
  /// notification still owed to observers.
  ///
  /// This is the one way a store changes a live value's memory: for its own writes (under its lock, right
  /// after the commit) and for versions committed elsewhere (another process, another replica, `pld-tool`).
  /// A version that is not newer than the one in memory changes nothing: two writers racing to apply
  /// their commits leave the newest, and nobody hears of a version twice.
  ///
  /// ```swift
  /// let effect = data.advance(to: newValue, version: 8, onMainActor: false)
  /// effect.notifyObservers()   // after releasing the store's lock
  /// ```
  /// - Parameters:
  ///   - newValue: The committed value.
  ///   - newVersion: Its version.
  ///   - onMainActor: Whether the writer runs on the main actor (observers are then called synchronously
  ///     by ``CommitEffect/notifyObservers()``); otherwise one main-actor dispatch is scheduled.
  /// - Returns: What to notify once no lock is held; ``CommitEffect/none`` if memory was already newer.
  package func advance(to newValue: Value, version newVersion: Int64, onMainActor: Bool) -> CommitEffect {
    let mustSchedule = storage.withLock { storage -> Bool? in
      guard newVersion > storage.version else { return nil }
      return storage.commit(newValue, version: newVersion, onMainActor: onMainActor)
    }
    guard let mustSchedule else { return .none }
    return CommitEffect(target: self, onMainActor: onMainActor, mustSchedule: mustSchedule)
  }

  /// A delivery of whatever observers have not seen yet, synchronous when `onMainActor`; none otherwise.
  ///
  /// For a writer on the main actor whose version reached memory another way first (a backend that
  /// learned of the commit before the write returned): its observers are still called before the write
  /// returns, and nobody hears of a version twice.
  ///
  /// ```swift
  /// var effect = data.advance(to: value, version: 8, onMainActor: true)
  /// if effect.isEmpty { effect = data.pendingDelivery(onMainActor: true) }
  /// effect.notifyObservers()
  /// ```
  /// Changes ``value`` in place and moves ``version`` one up, if `body` says it changed anything; returns
  /// the notification still owed to observers, as ``advance(to:version:onMainActor:)`` does.
  ///
  /// For values that are large and change a little at a time (a collection's dictionary): the value is
  /// mutated where it is stored, so that it is copied only while somebody still holds an older snapshot.
  ///
  /// ```swift
  /// let effect = members.advanceInPlace(onMainActor: false) { $0["7"] = item; return true }
  /// ```
  /// - Parameters:
  ///   - onMainActor: As for ``advance(to:version:onMainActor:)``.
  ///   - body: Mutates the value; returns false when it changed nothing (then the version stays).
  package func advanceInPlace(onMainActor: Bool, _ body: (inout Value) -> Bool) -> CommitEffect {
    let mustSchedule = storage.withLock { storage -> Bool? in
      guard body(&storage.value) else { return nil }
      return storage.commitInPlace(version: storage.version + 1, onMainActor: onMainActor)
    }
    guard let mustSchedule else { return .none }
    return CommitEffect(target: self, onMainActor: onMainActor, mustSchedule: mustSchedule)
  }

  package func pendingDelivery(onMainActor: Bool) -> CommitEffect {
    onMainActor ? CommitEffect(target: self, onMainActor: true, mustSchedule: false) : .none
  }
}
