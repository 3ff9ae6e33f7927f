extension LiveData {
  /// A LiveData holding `transform` applied to each value of this one.
  ///
  /// The result is computed eagerly: it holds `transform(value)` right away (and is initialized if this
  /// LiveData is). It follows this LiveData while it has active observers.
  ///
  /// ```swift
  /// let count = MutableLiveData(3)
  /// let label = count.map { "\($0) items" }
  /// label.value   // "3 items"
  /// ```
  /// - Parameter transform: Called on the main actor for each new value.
  /// - Returns: A read-only LiveData of the transformed values.
  @MainActor
  public func map<T: Sendable>(_ transform: @escaping @MainActor (Value) -> T) -> LiveData<T> {
    let current = snapshot
    let result = MediatorLiveData<T>(value: transform(current.value), version: current.version >= 0 ? 0 : -1)
    result.addSource(self, deliveredVersion: current.version) { [weak result] value in
      result?.set(transform(value))
    }
    return result
  }

  /// A LiveData that mirrors the LiveData `transform` returns for the current value, switching when this
  /// value changes.
  ///
  /// After a switch the previous backing LiveData is ignored. When `transform` returns nil the result is
  /// set to nil.
  ///
  /// ```swift
  /// let userID = MutableLiveData("ada")
  /// let user = userID.switchMap { id in repository.user(id: id) }   // LiveData<User?>
  /// ```
  /// - Parameter transform: Called on the main actor with each new value; returns the LiveData to mirror.
  /// - Returns: A read-only LiveData of the backing values.
  @MainActor
  public func switchMap<T: Sendable>(
    _ transform: @escaping @MainActor (Value) -> LiveData<T>?
  ) -> LiveData<T?> {
    let current = snapshot
    let initialBacking = current.version >= 0 ? transform(current.value) : nil
    let initial = initialBacking.map(\.snapshot)
    let result: MediatorLiveData<T?>
    if let initial, initial.version >= 0 {
      result = MediatorLiveData<T?>(value: initial.value, version: 0)
    } else {
      result = MediatorLiveData<T?>()
    }
    let backing = SwitchMapBacking<T>()
    backing.attach(initialBacking, to: result, deliveredVersion: initial?.version ?? -1)
    result.addSource(self, deliveredVersion: current.version) { [weak result] value in
      guard let result else { return }
      let next = transform(value)
      guard !backing.isCurrent(next) else { return }
      backing.attach(next, to: result, deliveredVersion: -1)
      if next == nil { result.set(nil) }
    }
    return result
  }

  /// A LiveData that passes a value on only if it differs from the previous one passed on.
  ///
  /// The first value always passes.
  ///
  /// ```swift
  /// let query = MutableLiveData("")
  /// query.distinctUntilChanged().observe(owner: screen) { search($0) }
  /// query.set("swift")
  /// query.set("swift")   // not delivered again
  /// ```
  /// - Returns: A read-only LiveData without consecutive duplicates.
  @MainActor
  public func distinctUntilChanged() -> LiveData<Value> where Value: Equatable {
    let current = snapshot
    let isInitialized = current.version >= 0
    let result = MediatorLiveData<Value>(value: current.value, version: isInitialized ? 0 : -1)
    let last = LastValue<Value>(isInitialized ? current.value : nil)
    result.addSource(self, deliveredVersion: current.version) { [weak result] value in
      guard last.value != value else { return }
      last.value = value
      result?.set(value)
    }
    return result
  }
}

/// The LiveData a `switchMap` result currently mirrors.
///
/// Held weakly: the result's source link decides whether the backing is kept alive (see
/// `MediatorSource`), and a strong reference here would make result and backing hold each other.
@MainActor
private final class SwitchMapBacking<T: Sendable> {
  private weak var current: LiveData<T>?
  private var currentID: ObjectIdentifier?

  /// Whether `next` is what the result mirrors already (`nil` included).
  func isCurrent(_ next: LiveData<T>?) -> Bool {
    guard let next else { return currentID == nil }
    return next === current
  }

  func attach(_ next: LiveData<T>?, to result: MediatorLiveData<T?>, deliveredVersion: Int64) {
    if let previousID = currentID { result.removeSource(id: previousID) }
    current = next
    currentID = next.map(ObjectIdentifier.init)
    guard let next else { return }
    result.addSource(next, deliveredVersion: deliveredVersion) { [weak result] value in
      result?.set(value)
    }
  }
}

/// The last value `distinctUntilChanged` passed on.
@MainActor
private final class LastValue<Value> {
  var value: Value?
  init(_ value: Value?) { self.value = value }
}
