import Observation

/// An observable value holder whose observers respect lifecycles, modelled on Android's LiveData.
///
/// `LiveData` is the read-only face of a value: code that should only observe gets a `LiveData`, code
/// that writes holds a ``MutableLiveData`` (or a `PersistentLiveData`). Every write gets a new
/// ``version``; each observer receives a version at most once, in registration order, and only while its
/// owner is active. ``value`` and ``version`` can be read from any thread and always agree.
///
/// ```swift
/// final class ProfileScreen: LifecycleOwner {
///   let scopeLifecycle = ScopeLifecycle()
///   func bind(to name: LiveData<String>) {
///     name.observe(owner: self) { owner, name in owner.title = name }
///   }
///   var title = ""
/// }
/// ```
///
/// Observation is main-actor work; see the delivery rules in the package documentation.
///
/// `LiveData` is also `Observable` (Swift's Observation framework): a SwiftUI view that reads ``value``
/// in its body is updated with every delivered version. See the article "SwiftUI and Observation" of
/// PersistentLiveData.
///
/// A derived LiveData (``map(_:)``, ``distinctUntilChanged()``, ``switchMap(_:)``, any
/// ``MediatorLiveData``) that nobody references keeps working as long as it is observed: see
/// ``MediatorLiveData``.
// Sendable: `storage` is guarded by its own lock (`Locked`); everything else is main-actor isolated and
// checked by the compiler. `@unchecked` only because an open class cannot be checked for Sendable.
open class LiveData<Value: Sendable>: @unchecked Sendable {
  /// Value, version and async-sequence subscribers, readable and writable from any thread.
  let storage: Locked<LiveDataStorage<Value>>
  /// The observers, created with the first registration.
  @MainActor private var observerRegistry: ObserverRegistry<Value>?
  /// Dispatch bookkeeping.
  @MainActor var isDispatching = false
  @MainActor var dispatchInvalidated = false
  /// Swift's Observation: the registrar that ``value`` and ``version`` report their reads to.
  let observationRegistrar = ObservationRegistrar()
  /// The newest version announced to Observation: a dispatch announces a version only once.
  @MainActor var observationVersion: Int64

  /// Creates a LiveData holding `value` at version 0.
  ///
  /// ```swift
  /// let count = LiveData(0)
  /// count.version        // 0
  /// count.isInitialized  // true
  /// ```
  /// - Parameter value: The initial value; it is delivered to observers that register.
  public init(_ value: Value) {
    storage = Locked(LiveDataStorage(value: value, version: 0))
    observationVersion = 0
  }

  /// Creates a LiveData that has no value yet (version -1): nothing is delivered until the first set.
  ///
  /// ```swift
  /// let user = MutableLiveData<User?>()
  /// user.isInitialized   // false
  /// user.observeForever { print($0 as Any) }   // not called until user.set(…)
  /// ```
  public init() where Value: ExpressibleByNilLiteral {
    storage = Locked(LiveDataStorage(value: nil, version: -1))
    observationVersion = -1
  }

  /// Creates a LiveData at an explicit version; -1 means "not initialized".
  package init(value: Value, version: Int64) {
    storage = Locked(LiveDataStorage(value: value, version: version))
    observationVersion = version
  }

  deinit {
    let continuations = storage.withLock { storage in
      defer { storage.continuations.removeAll() }
      return Array(storage.continuations.values)
    }
    for continuation in continuations { continuation.finish() }
  }

  /// The observer registry, created on first use: a LiveData nobody observes (most restored persistent
  /// values at startup) costs no registry.
  @MainActor var registry: ObserverRegistry<Value> {
    if let observerRegistry { return observerRegistry }
    let registry = ObserverRegistry<Value>()
    storage.withLock { $0.isWatched = true }
    registry.onActiveStateChange = { [weak self] active in
      guard let self else { return }
      if active { self.onActive() } else { self.onInactive() }
    }
    registry.onEntryActivated = { [weak self] entry in
      self?.dispatch(entry: entry)
    }
    registry.onLifecycleHoldChange = { [weak self] held in
      self?.lifecycleHoldDidChange(held)
    }
    if let holder = self as? any SelfHoldingLiveData {
      registry.onObservedChange = { [weak holder] observed in
        holder?.observedStateDidChange(observed)
      }
      registry.onObjectBindingChange = { [weak holder] bound in
        holder?.objectBindingDidChange(bound)
      }
    }
    observerRegistry = registry
    return registry
  }

  /// What the scope of each lifecycle-bound observer holds until the observer is removed: nothing for a
  /// plain LiveData (its owner keeps it), the mediator itself for a ``MediatorLiveData``.
  @MainActor var heldByObservingLifecycles: (any AnyObject & Sendable)? { nil }

  /// Called when the first observer bound to a lifecycle registers (`true`) and when the last one goes
  /// (`false`). A mediator, which those lifecycles then hold, passes the hold on to its sources.
  @MainActor func lifecycleHoldDidChange(_ held: Bool) {}

  /// The registry if one exists, without creating it.
  @MainActor package var existingRegistry: ObserverRegistry<Value>? { observerRegistry }

  /// The current value. Readable from any thread.
  ///
  /// Read inside `withObservationTracking` (or a SwiftUI view's body), it registers interest: the next
  /// delivered version calls `onChange` on the main actor. See the article "SwiftUI and Observation" of
  /// PersistentLiveData.
  ///
  /// ```swift
  /// let total = cart.value.reduce(0) { $0 + $1.price }
  /// ```
  public var value: Value {
    registerObservationAccess()
    return storage.withLock { storage in
      storage.isWatched = true
      return storage.value
    }
  }

  /// The version of ``value``: 0 for the initial value, -1 when not initialized, and one more on every
  /// set, equal values included. Readable from any thread and always consistent with ``value``.
  ///
  /// Like ``value``, it registers interest when read inside `withObservationTracking`.
  ///
  /// ```swift
  /// let flag = MutableLiveData(false)
  /// flag.set(false)
  /// flag.version   // 1
  /// ```
  public var version: Int64 {
    registerObservationAccess()
    return storage.withLock { storage in
      storage.isWatched = true
      return storage.version
    }
  }

  /// Whether the LiveData holds a value (version ≥ 0).
  ///
  /// ```swift
  /// MutableLiveData<Int?>().isInitialized   // false
  /// LiveData(1).isInitialized               // true
  /// ```
  public var isInitialized: Bool { version >= 0 }

  /// The version in memory, read as a store reads it: unlike ``version`` it neither registers an
  /// Observation access nor marks the value as watched (which makes every later write off the main actor
  /// schedule a main-actor dispatch).
  package var storedVersion: Int64 {
    storage.withLock { $0.version }
  }

  /// The value and its version, read together.
  package var snapshot: (value: Value, version: Int64) {
    storage.withLock { ($0.value, $0.version) }
  }

  /// Called on the main actor when the number of active observers goes from 0 to 1.
  ///
  /// Override it to start work that is only needed while someone watches, and stop it in
  /// ``onInactive()``. It is not called again until ``onInactive()`` has been.
  ///
  /// ```swift
  /// final class LocationData: MutableLiveData<Location?>, @unchecked Sendable {
  ///   override func onActive() { locationService.start { self.set($0) } }
  ///   override func onInactive() { locationService.stop() }
  /// }
  /// ```
  @MainActor open func onActive() {}

  /// Called on the main actor when the number of active observers goes from 1 to 0.
  ///
  /// ```swift
  /// override func onInactive() { poller.stop() }
  /// ```
  @MainActor open func onInactive() {}
}

/// A LiveData that nobody else holds — a store's live value or collection, in the store's modules — and
/// that therefore holds itself while it is observed, and is kept alive by a consumer of
/// ``LiveData/values`` until it stops consuming. A plain LiveData belongs to whoever created it, and its
/// sequences end when it is released.
package protocol SelfHoldingLiveData: AnyObject {
  /// Called when the first observer registers (`true`) and when the last one goes (`false`), whatever
  /// it is bound to.
  @MainActor func observedStateDidChange(_ observed: Bool)

  /// Called when the first observer bound to a plain object (not a lifecycle, not forever) registers
  /// (`true`) and when the last one goes (`false`).
  @MainActor func objectBindingDidChange(_ bound: Bool)
}

/// The part of a LiveData that any thread may read and write, guarded by one lock.
struct LiveDataStorage<Value: Sendable>: Sendable {
  var value: Value
  var version: Int64
  /// A main-actor dispatch has been scheduled for writes made off the main actor.
  var dispatchScheduled = false
  /// Whether anyone may be waiting for a delivery: ``LiveData/value`` or ``LiveData/version`` was read
  /// (inside `withObservationTracking`, perhaps) or an observer registry exists. Until then a write made
  /// off the main actor schedules no main-actor dispatch: it would have nobody to deliver to and nothing
  /// to announce. (Set under the lock, before the read returns: a write that does not see it committed
  /// before that read, which then returns the write's value.)
  var isWatched = false
  var continuations: [UInt64: AsyncStream<Value>.Continuation] = [:]
  var nextContinuationID: UInt64 = 0

  init(value: Value, version: Int64) {
    self.value = value
    self.version = version
  }

  /// Stores a new value at `newVersion` and hands it to the async sequences.
  mutating func store(_ newValue: Value, version newVersion: Int64) {
    value = newValue
    version = newVersion
    for continuation in continuations.values { continuation.yield(newValue) }
  }

  /// Stores a write and says whether the writer must schedule a main-actor dispatch: only when it is not
  /// on the main actor, someone may be watching (``isWatched``) and none is scheduled yet, so that
  /// off-main writes coalesce into one delivery.
  /// ``commit(_:version:onMainActor:)`` for a value already changed where it is stored.
  mutating func commitInPlace(version newVersion: Int64, onMainActor: Bool) -> Bool {
    version = newVersion
    for continuation in continuations.values { continuation.yield(value) }
    guard !onMainActor, isWatched, !dispatchScheduled else { return false }
    dispatchScheduled = true
    return true
  }

  mutating func commit(_ newValue: Value, version newVersion: Int64, onMainActor: Bool) -> Bool {
    store(newValue, version: newVersion)
    guard !onMainActor, isWatched, !dispatchScheduled else { return false }
    dispatchScheduled = true
    return true
  }
}
