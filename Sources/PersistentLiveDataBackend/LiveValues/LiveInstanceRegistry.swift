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
    // One lookup of the key, which inserts when it is missing (the common case when a store opens and
    // creates its live values one after the other), and no cast when `created` itself wins.
    let winner = entries.withLock { entries -> Entry? in
      Self.claim(
        &entries[StoreKey(key), default: Entry(object: nil, valueType: valueType)], for: created,
        valueType: valueType)
    }
    guard let winner, let object = winner.object else { return created }
    return try Self.cast(object, existing: winner.valueType, requested: valueType, key: key)
  }

  /// Makes `entry` hold `created` (of `valueType`) unless it holds a live instance; returns that entry,
  /// or nil when `created` took it.
  private static func claim(
    _ entry: inout Entry, for created: any StoredLiveValue, valueType: Any.Type
  ) -> Entry? {
    if entry.object != nil { return entry }
    entry = Entry(object: created, valueType: valueType)
    return nil
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
