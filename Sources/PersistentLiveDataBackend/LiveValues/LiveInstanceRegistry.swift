/// The one live instance per key of a store, held weakly, with the value type it was created for.
///
/// Asking a store twice for a key returns the same object while it is alive; asking with another value
/// type throws ``PersistentLiveDataError/typeMismatch(key:existing:requested:)``. Backend-neutral: the
/// SQLite store and a shared store on a server use it alike. Its lock is a leaf: nothing else is locked
/// or called while it is held.
///
/// ```swift
/// let registry = LiveInstanceRegistry()
/// if let existing = try registry.instance(of: PersistentLiveData<Int>.self, for: "count") { return existing }
/// let winner = try registry.register(created, valueType: Int.self)   // another thread's may win
/// ```
package final class LiveInstanceRegistry: Sendable {
  private struct Entry {
    weak var object: (any StoredLiveValue)?
    let valueType: Any.Type
  }

  private let entries = Locked<[StoreKey: Entry]>([:])

  package init() {}

  /// The live instance of `key`, whatever its type.
  package func instance(for key: String) -> (any StoredLiveValue)? {
    entries.withLock { $0[key]?.object }
  }

  /// The live instance of `key` if there is one of type `Instance`.
  ///
  /// - Throws: ``PersistentLiveDataError/typeMismatch(key:existing:requested:)`` when the live instance
  ///   has another value type.
  package func instance<Instance: StoredLiveValue>(
    of type: Instance.Type, for key: String, valueType: Any.Type
  ) throws -> Instance? {
    guard let entry = entries.withLock({ $0[key] }), let object = entry.object else { return nil }
    return try Self.cast(object, existing: entry.valueType, requested: valueType, key: key)
  }

  /// Registers `created` unless another thread registered an instance of its key first, and returns the
  /// one that is live.
  ///
  /// - Throws: ``PersistentLiveDataError/typeMismatch(key:existing:requested:)`` when the instance that
  ///   won has another value type.
  package func register<Instance: StoredLiveValue>(
    _ created: Instance, valueType: Any.Type
  ) throws -> Instance {
    let key = created.key
    let winner = entries.withLock { entries -> Entry in
      if let existing = entries[key], existing.object != nil { return existing }
      let entry = Entry(object: created, valueType: valueType)
      entries[key] = entry
      return entry
    }
    guard let object = winner.object else { return created }
    return try Self.cast(object, existing: winner.valueType, requested: valueType, key: key)
  }

  /// Every instance still alive, in no particular order.
  package var liveInstances: [any StoredLiveValue] {
    entries.withLock { entries in
      entries = entries.filter { $0.value.object != nil }
      return entries.values.compactMap(\.object)
    }
  }

  private static func cast<Instance: StoredLiveValue>(
    _ object: any StoredLiveValue, existing: Any.Type, requested: Any.Type, key: String
  ) throws -> Instance {
    if let typed = object as? Instance { return typed }
    throw PersistentLiveDataError.typeMismatch(
      key: key, existing: String(reflecting: existing), requested: String(reflecting: requested))
  }
}
