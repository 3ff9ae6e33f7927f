/// The one live collection per name of a store, held weakly, with the element type it was created for.
///
/// Asking a store twice for a collection returns the same object while it is alive; asking with another
/// element type throws ``PersistentLiveDataError/typeMismatch(key:existing:requested:)``. A store hands
/// every committed change of a key to the collections whose members it is (``apply(_:onMainActor:)``).
/// Backend-neutral; its lock is a leaf: nothing else is locked or called while it is held.
///
/// ```swift
/// let registry = LiveCollectionRegistry()
/// let live = try registry.register(created, elementType: Todo.self)
/// registry.apply(changes, onMainActor: false).notifyObservers()
/// ```
package final class LiveCollectionRegistry: Sendable {
  private struct Entry {
    weak var object: (any StoredCollectionValue)?
    let elementType: Any.Type
  }

  private let entries = Locked<[String: Entry]>([:])

  package init() {}

  /// Whether no collection was ever opened (or all were released): a store then collects nothing for
  /// collections when it commits.
  package var isEmpty: Bool {
    entries.withLock { $0.isEmpty }
  }

  /// The live collection `name` if there is one of type `Instance`.
  ///
  /// - Throws: ``PersistentLiveDataError/typeMismatch(key:existing:requested:)`` when it has another
  ///   element type.
  package func collection<Instance: StoredCollectionValue>(
    of type: Instance.Type, named name: String, elementType: Any.Type
  ) throws -> Instance? {
    guard let entry = entries.withLock({ $0[name] }), let object = entry.object else { return nil }
    return try Self.cast(object, existing: entry.elementType, requested: elementType, name: name)
  }

  /// Registers `created` unless another thread registered a collection of its name first, and returns
  /// the one that is live.
  package func register<Instance: StoredCollectionValue>(
    _ created: Instance, named name: String, elementType: Any.Type
  ) throws -> Instance {
    let winner = entries.withLock { entries -> Entry in
      entries = entries.filter { $0.value.object != nil }
      if let existing = entries[name], existing.object != nil { return existing }
      let entry = Entry(object: created, elementType: elementType)
      entries[name] = entry
      return entry
    }
    guard let object = winner.object else { return created }
    return try Self.cast(object, existing: winner.elementType, requested: elementType, name: name)
  }

  /// Every collection still alive.
  package var liveCollections: [any StoredCollectionValue] {
    entries.withLock { $0.values.compactMap(\.object) }
  }

  /// The newest version of `key` a live collection that holds it knows (0 when one holds it but never
  /// saw it); nil when no live collection holds the key.
  package func memberVersion(of key: String) -> Int64? {
    var newest: Int64?
    for collection in liveCollections {
      guard let version = collection.memberVersion(ofKey: key) else { continue }
      newest = max(newest ?? 0, version)
    }
    return newest
  }

  /// Hands `changes` to every live collection; each takes those of its members, as one new version.
  package func apply(_ changes: [MemberChange], onMainActor: Bool) -> CommitEffect {
    var effect = CommitEffect.none
    for collection in liveCollections {
      effect.merge(collection.apply(changes, onMainActor: onMainActor))
    }
    return effect
  }

  private static func cast<Instance: StoredCollectionValue>(
    _ object: any StoredCollectionValue, existing: Any.Type, requested: Any.Type, name: String
  ) throws -> Instance {
    if let typed = object as? Instance { return typed }
    throw PersistentLiveDataError.typeMismatch(
      key: name, existing: String(reflecting: existing), requested: String(reflecting: requested))
  }
}
