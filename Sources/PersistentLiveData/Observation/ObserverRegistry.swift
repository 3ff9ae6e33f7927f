/// What an observer is bound to, which decides when it is active.
enum ObserverBinding {
  /// `observeForever`: always active until removed.
  case forever
  /// A plain object: active while it is alive.
  case object
  /// A lifecycle: active while its state is `.active`, removed at `.deinitialized`.
  case lifecycle
}

/// One registration of an observer with a registry.
final class ObserverEntry<Value: Sendable> {
  let observer: Observer<Value>
  let binding: ObserverBinding
  /// The owner, never retained. `nil` for forever observers.
  weak var owner: AnyObject?
  // The fields read for every delivery skip dynamic exclusivity checks: they are only touched on the
  // main actor, and never through overlapping inout accesses.
  /// The newest version this observer has been given.
  @exclusivity(unchecked) var deliveredVersion: Int64
  /// Active (and not removed): deliveries reach it.
  @exclusivity(unchecked) var isActive = false
  @exclusivity(unchecked) var isRemoved = false
  /// Whether becoming active should deliver the current value (false only while registering with
  /// `receiveCurrent: false`).
  var deliversOnActivation = true
  var lifecycleSubscription: (any Cancellable)?

  init(observer: Observer<Value>, binding: ObserverBinding, owner: AnyObject?, deliveredVersion: Int64) {
    self.observer = observer
    self.binding = binding
    self.owner = owner
    self.deliveredVersion = deliveredVersion
  }

  /// Whether the entry can no longer receive anything: cancelled, or its owner is gone.
  var isDead: Bool {
    observer.isCancelled || (binding != .forever && owner == nil)
  }
}

/// The observers of one LiveData or event, in registration order, with their activity.
///
/// All methods run on the main actor. Removal marks an entry and compacts the array lazily, so
/// registering, delivering to and removing `n` observers is O(n) overall, and a dispatch can iterate by
/// index while callbacks add or remove observers.
final class ObserverRegistry<Value: Sendable>: ObserverHost, @unchecked Sendable {
  @exclusivity(unchecked) private(set) var entries: [ObserverEntry<Value>] = []
  private var index: [ObjectIdentifier: ObserverEntry<Value>] = [:]
  private var removedCount = 0
  /// Depth of running iterations; compaction waits until it is zero.
  private var iterationDepth = 0

  private var activeCount = 0
  private var isChangingActiveState = false

  /// Called with `true` on 0 → 1 active observers and `false` on 1 → 0.
  var onActiveStateChange: (@MainActor (Bool) -> Void)?
  /// Called when an entry becomes active and should catch up.
  var onEntryActivated: (@MainActor (ObserverEntry<Value>) -> Void)?

  init() {}

  @MainActor var liveEntryCount: Int { index.count }

  @MainActor var hasActiveEntries: Bool { activeCount > 0 }

  @MainActor func entry(for observer: Observer<Value>) -> ObserverEntry<Value>? {
    index[ObjectIdentifier(observer)]
  }

  // MARK: Registration

  /// Adds `observer` bound to `owner` (nil: forever). Returns nil if it is already registered or was
  /// cancelled; otherwise its entry (which a callback may already have removed again).
  @MainActor @discardableResult
  func register(
    _ observer: Observer<Value>, owner: AnyObject?, deliversCurrent: Bool, deliveredVersion: Int64
  ) -> ObserverEntry<Value>? {
    let id = ObjectIdentifier(observer)
    guard index[id] == nil, !observer.isCancelled else { return nil }
    let lifecycle = owner.flatMap(Self.lifecycle(of:))
    let binding: ObserverBinding = owner == nil ? .forever : (lifecycle == nil ? .object : .lifecycle)
    let entry = ObserverEntry(
      observer: observer, binding: binding, owner: owner, deliveredVersion: deliveredVersion)
    entries.append(entry)
    index[id] = entry
    observer.attach(to: self)

    entry.deliversOnActivation = deliversCurrent
    if let lifecycle {
      // observeState replays the current state synchronously, which sets the initial activity.
      entry.lifecycleSubscription = lifecycle.observeState { [weak self, weak entry] state in
        guard let self, let entry, !entry.isRemoved else { return }
        switch state {
        case .active: self.setActive(entry, true)
        case .initialized, .inactive: self.setActive(entry, false)
        case .deinitialized: self.remove(entry)
        }
      }
    } else {
      setActive(entry, true)
    }
    entry.deliversOnActivation = true
    return entry
  }

  /// The lifecycle an owner object stands for, if any.
  @MainActor
  private static func lifecycle(of owner: AnyObject) -> ScopeLifecycle? {
    if let owner = owner as? any LifecycleOwner { return owner.scopeLifecycle }
    if let scope = owner as? ScopeLifecycle { return scope }
    if let dependent = owner as? any LifecycleDependent { return dependent.scopeLifecycle }
    return nil
  }

  // MARK: Removal

  /// Removes `observer`; returns its entry, or nil if it was not registered.
  @MainActor @discardableResult
  func remove(_ observer: Observer<Value>) -> ObserverEntry<Value>? {
    guard let entry = index[ObjectIdentifier(observer)] else { return nil }
    remove(entry)
    return entry
  }

  @MainActor
  func remove(_ entry: ObserverEntry<Value>) {
    guard !entry.isRemoved else { return }
    entry.isRemoved = true
    index[ObjectIdentifier(entry.observer)] = nil
    entry.observer.detach(from: self)
    let subscription = entry.lifecycleSubscription
    entry.lifecycleSubscription = nil
    subscription?.cancel()
    removedCount += 1
    setActive(entry, false)
    compactIfNeeded()
  }

  @MainActor
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
  @MainActor
  func pruneDeadEntries() {
    removeAll { $0.isDead }
  }

  nonisolated func observerWasCancelled(_ id: ObjectIdentifier) {
    Task { @MainActor [weak self] in
      guard let self, let entry = self.index[id] else { return }
      self.remove(entry)
    }
  }

  @MainActor
  private func compactIfNeeded() {
    guard iterationDepth == 0, removedCount > 32, removedCount * 2 > entries.count else { return }
    entries.removeAll { $0.isRemoved }
    removedCount = 0
  }

  // MARK: Iteration

  /// Brackets an iteration over ``entries``: removals only mark entries until it ends.
  @MainActor func beginIteration() { iterationDepth += 1 }

  @MainActor func endIteration() {
    iterationDepth -= 1
    compactIfNeeded()
  }

  /// Calls `body` for each entry in registration order, including entries added meanwhile; stops early
  /// when `body` returns false. Removed entries are skipped.
  @MainActor
  func forEachEntry(_ body: (ObserverEntry<Value>) -> Bool) {
    iterationDepth += 1
    defer {
      iterationDepth -= 1
      compactIfNeeded()
    }
    var position = 0
    while position < entries.count {
      let entry = entries[position]
      position += 1
      if entry.isRemoved { continue }
      if !body(entry) { return }
    }
  }

  // MARK: Activity

  @MainActor
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
  @MainActor
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
}
