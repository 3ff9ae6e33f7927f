/// The observers of one LiveData or event, in registration order, with their activity.
///
/// Main-actor isolated, except ``observerWasCancelled(_:)``, which ``Observer/cancel()`` calls from any
/// thread. Removal marks an entry and compacts the array lazily, so registering, delivering to and removing
/// `n` observers is O(n) overall, and a dispatch can iterate by index while callbacks add or remove
/// observers.
@MainActor package final class ObserverRegistry<Value: Sendable>: ObserverHost {
  @exclusivity(unchecked) private(set) var entries: [ObserverEntry<Value>] = []
  private var index: [ObjectIdentifier: ObserverEntry<Value>] = [:]
  private var removedCount = 0
  /// Depth of running iterations; compaction waits until it is zero.
  private var iterationDepth = 0

  private var activeCount = 0
  private var isChangingActiveState = false
  /// Registered entries bound to a lifecycle: each one's scope keeps the LiveData alive.
  private var lifecycleBoundCount = 0

  /// Called with `true` on 0 → 1 active observers and `false` on 1 → 0.
  var onActiveStateChange: (@MainActor (Bool) -> Void)?
  /// Called when an entry becomes active and should catch up.
  var onEntryActivated: (@MainActor (ObserverEntry<Value>) -> Void)?
  /// Called with `true` on 0 → 1 lifecycle-bound entries and `false` on 1 → 0.
  var onLifecycleHoldChange: (@MainActor (Bool) -> Void)?
  /// Called with `true` on 0 → 1 registered entries and `false` on 1 → 0.
  var onObservedChange: (@MainActor (Bool) -> Void)?
  /// Called with `true` on 0 → 1 entries bound to a plain object (neither forever nor a lifecycle) and
  /// `false` on 1 → 0: only a sweep notices that such an owner is gone while nothing is delivered.
  var onObjectBindingChange: (@MainActor (Bool) -> Void)?
  private var objectBoundCount = 0

  nonisolated init() {}

  var liveEntryCount: Int { index.count }

  var hasActiveEntries: Bool { activeCount > 0 }

  package func entry(for observer: Observer<Value>) -> ObserverEntry<Value>? {
    index[ObjectIdentifier(observer)]
  }

  // MARK: Registration

  /// Adds `observer` bound to `owner` (nil: forever). Returns nil if it is already registered or was
  /// cancelled; otherwise its entry (which a callback may already have removed again).
  ///
  /// When the owner stands for a lifecycle, its scope holds `keepingAlive` (a mediator) until the entry is
  /// removed, as Android's lifecycle holds its observers and, through them, their LiveData: a derived
  /// LiveData nobody else references lives as long as an owner observes it.
  @discardableResult
  func register(
    _ observer: Observer<Value>, owner: AnyObject?, deliversCurrent: Bool, deliveredVersion: Int64,
    keepingAlive: (any AnyObject & Sendable)? = nil
  ) -> ObserverEntry<Value>? {
    let id = ObjectIdentifier(observer)
    guard index[id] == nil, !observer.isCancelled else { return nil }
    let lifecycle = owner.flatMap(Self.lifecycle(of:))
    let binding: ObserverBinding = owner == nil ? .forever : (lifecycle == nil ? .object : .lifecycle)
    let entry = ObserverEntry(
      observer: observer, binding: binding, owner: owner, scopeState: lifecycle?.stateCell,
      deliveredVersion: deliveredVersion)
    entries.append(entry)
    index[id] = entry
    observer.attach(to: self)
    if binding == .object {
      objectBoundCount += 1
      if objectBoundCount == 1 { onObjectBindingChange?(true) }
    }
    if index.count == 1 { onObservedChange?(true) }

    entry.deliversOnActivation = deliversCurrent
    if let lifecycle {
      changeLifecycleBoundCount(by: 1)
      // The observation replays the current state synchronously, which sets the initial activity.
      let subscription = lifecycle.addStateObservation { [weak self, weak entry, keepingAlive] state in
        withExtendedLifetime(keepingAlive) {
          guard let self, let entry, !entry.isRemoved else { return }
          switch state {
          case .active: self.setActive(entry, true)
          case .initialized, .inactive: self.setActive(entry, false)
          case .deinitialized: self.remove(entry)
          }
        }
      }
      if entry.isRemoved {
        subscription.cancel()  // removed by a callback during the replay
      } else {
        entry.lifecycleSubscription = subscription
      }
    } else {
      setActive(entry, true)
    }
    entry.deliversOnActivation = true
    return entry
  }

  /// The lifecycle an owner object stands for, if any.
  private static func lifecycle(of owner: AnyObject) -> ScopeLifecycle? {
    if let owner = owner as? any LifecycleOwner { return owner.scopeLifecycle }
    if let scope = owner as? ScopeLifecycle { return scope }
    if let dependent = owner as? any LifecycleDependent { return dependent.scopeLifecycle }
    return nil
  }

  // MARK: Removal

  /// Removes `observer`; returns its entry, or nil if it was not registered.
  @discardableResult
  func remove(_ observer: Observer<Value>) -> ObserverEntry<Value>? {
    guard let entry = index[ObjectIdentifier(observer)] else { return nil }
    remove(entry)
    return entry
  }

  func remove(_ entry: ObserverEntry<Value>) {
    guard !entry.isRemoved else { return }
    entry.isRemoved = true
    index[ObjectIdentifier(entry.observer)] = nil
    entry.observer.detach(from: self)
    removedCount += 1
    setActive(entry, false)
    if entry.binding == .lifecycle { changeLifecycleBoundCount(by: -1) }
    if entry.binding == .object {
      objectBoundCount -= 1
      if objectBoundCount == 0 { onObjectBindingChange?(false) }
    }
    // Last: cancelling releases what the scope held for the entry, and the last entry's removal what
    // the LiveData holds while observed — either may be the LiveData itself.
    let subscription = entry.lifecycleSubscription
    entry.lifecycleSubscription = nil
    subscription?.cancel()
    compactIfNeeded()
    if index.isEmpty { onObservedChange?(false) }
  }

  func removeAll(where shouldRemove: (ObserverEntry<Value>) -> Bool) {
    iterationDepth += 1
    var position = 0
    while position < entries.count {
      let entry = entries[position]
      if !entry.isRemoved, shouldRemove(entry) { remove(entry) }
      position += 1
    }
    iterationDepth -= 1
    compactIfNeeded()
  }

  /// Removes entries whose owner is gone or whose observer was cancelled.
  func pruneDeadEntries() {
    removeAll { $0.isDead }
  }

  nonisolated func observerWasCancelled(_ id: ObjectIdentifier) {
    Task { @MainActor [weak self] in
      guard let self, let entry = self.index[id] else { return }
      self.remove(entry)
    }
  }

  private func compactIfNeeded() {
    guard iterationDepth == 0, removedCount > 32, removedCount * 2 > entries.count else { return }
    entries.removeAll { $0.isRemoved }
    removedCount = 0
  }

  // MARK: Iteration

  /// Brackets an iteration over ``entries``: removals only mark entries until it ends.
  func beginIteration() { iterationDepth += 1 }

  func endIteration() {
    iterationDepth -= 1
    compactIfNeeded()
  }

  // MARK: Activity

  func setActive(_ entry: ObserverEntry<Value>, _ active: Bool) {
    let becomesActive = active && !entry.isRemoved
    guard entry.isActive != becomesActive else { return }
    entry.isActive = becomesActive
    changeActiveCount(by: becomesActive ? 1 : -1)
    if becomesActive, entry.deliversOnActivation {
      onEntryActivated?(entry)
    }
  }

  /// Applies a change of the active count and reports each 0 ↔ 1 transition once, also when the
  /// callbacks themselves add or remove observers.
  private func changeActiveCount(by change: Int) {
    var previous = activeCount
    activeCount += change
    guard !isChangingActiveState else { return }
    isChangingActiveState = true
    defer { isChangingActiveState = false }
    while previous != activeCount {
      let becameActive = previous == 0 && activeCount > 0
      let becameInactive = previous > 0 && activeCount == 0
      previous = activeCount
      if becameActive {
        onActiveStateChange?(true)
      } else if becameInactive {
        onActiveStateChange?(false)
      }
    }
  }

  /// Deactivates an entry whose scope has left `.active` before telling it, instead of delivering to it
  /// (Android's `considerNotify`). Its scope observation then reports the next state even if it is the
  /// one reported last, so the entry catches up when the scope is active again, also when a callback
  /// reactivated the scope before the entry heard of the deactivation.
  func deactivateUntilScopeIsActive(_ entry: ObserverEntry<Value>) {
    entry.lifecycleSubscription?.forgetLastDelivered()
    setActive(entry, false)
  }

  private func changeLifecycleBoundCount(by change: Int) {
    lifecycleBoundCount += change
    if change > 0, lifecycleBoundCount == 1 {
      onLifecycleHoldChange?(true)
    } else if change < 0, lifecycleBoundCount == 0 {
      onLifecycleHoldChange?(false)
    }
  }
}
