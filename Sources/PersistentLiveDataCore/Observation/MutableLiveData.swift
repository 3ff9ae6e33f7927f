/// A ``LiveData`` that can be written from any isolation.
///
/// Called on the main actor, ``set(_:isolation:)`` notifies observers before it returns. Called from
/// anywhere else, it updates ``LiveData/value`` and ``LiveData/version`` before it returns and schedules
/// one delivery on the main actor that coalesces to the latest value (Android's `postValue`).
///
/// ```swift
/// final class CounterModel {
///   private let _count = MutableLiveData(0)
///   var count: LiveData<Int> { _count }     // expose read-only
///   func increment() { _count.update { $0 += 1 } }
/// }
/// ```
open class MutableLiveData<Value: Sendable>: LiveData<Value>, @unchecked Sendable {
  /// Stores a new value with the next version and notifies observers.
  ///
  /// Every call bumps the version, equal values included.
  ///
  /// ```swift
  /// let status = MutableLiveData("idle")
  /// status.set("loading")                       // on the main actor: observers already called
  /// Task.detached { status.set("done") }        // elsewhere: delivered on the main actor
  /// ```
  /// - Parameters:
  ///   - newValue: The value to store.
  ///   - isolation: The caller's isolation, filled in by the compiler; decides whether observers are
  ///     called now (main actor) or scheduled.
  public func set(_ newValue: Value, isolation: isolated (any Actor)? = #isolation) {
    let onMainActor = isolation === MainActor.shared
    let mustSchedule = storage.withLock {
      $0.commit(newValue, version: $0.version + 1, onMainActor: onMainActor)
    }
    notifyAfterWrite(onMainActor: onMainActor, mustSchedule: mustSchedule)
  }

  /// Atomically reads, transforms and writes the value.
  ///
  /// The transform runs without any lock held, on a copy of the current value; if another write lands
  /// in between, the transform runs again on the newer value, so under contention it may run more than
  /// once and must not have side effects. A transform that throws changes nothing.
  ///
  /// ```swift
  /// let hits = MutableLiveData(0)
  /// hits.update { $0 += 1 }        // safe from many threads at once
  /// let tags = MutableLiveData<[String]>([])
  /// tags.update { $0.append("new") }
  /// ```
  /// - Parameters:
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - transform: Mutates the value in place.
  /// - Returns: The value written.
  /// - Throws: Whatever `transform` throws; nothing is written then.
  @discardableResult
  public func update(
    isolation: isolated (any Actor)? = #isolation, _ transform: (inout Value) throws -> Void
  ) rethrows -> Value {
    let onMainActor = isolation === MainActor.shared
    while true {
      var (candidate, baseVersion) = snapshot
      try transform(&candidate)
      let outcome = storage.withLock { storage -> (committed: Bool, mustSchedule: Bool) in
        guard storage.version == baseVersion else { return (false, false) }
        return (true, storage.commit(candidate, version: baseVersion + 1, onMainActor: onMainActor))
      }
      if outcome.committed {
        notifyAfterWrite(onMainActor: onMainActor, mustSchedule: outcome.mustSchedule)
        return candidate
      }
    }
  }
}
