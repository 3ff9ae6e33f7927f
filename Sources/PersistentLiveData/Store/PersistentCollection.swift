internal import Foundation

/// Many values under one name, each its own key, observed and followed as one live dictionary.
///
/// Get one from ``PersistentStore/collection(_:of:)``. A member is an ordinary key `name/id`, with its own
/// versions, history, retention and attribution: ``PersistentStore/liveData(_:default:)``, `pld-tool` and
/// the inspector work on it, and a member written through them (by this process or another) is in the
/// collection. ``/PersistentLiveDataCore/LiveData/value`` maps each member's id to its latest value; each
/// commit that changes members — one `set`, or a whole ``PersistentStore/transaction(isolation:_:)`` — is one
/// new ``/PersistentLiveDataCore/LiveData/version`` of the collection, and observers coalesce as for any
/// ``/PersistentLiveDataCore/LiveData``.
///
/// Writing one member writes that member's key only: the cost of a change follows the change, not the
/// size of the collection, and two processes that change different members never conflict.
///
/// ```swift
/// struct Todo: Codable, Sendable { var title: String; var done = false }
///
/// let todos = try store.collection("todo", of: Todo.self)
/// try todos.set(Todo(title: "Buy milk"), for: "milk")
/// try todos.update("milk", default: Todo(title: "Buy milk")) { $0.done = true }
/// todos.observe(owner: screen) { members in screen.show(members.values) }
/// try todos.remove("milk")
/// ```
///
/// Ids are any non-empty string, `/` included (`todo/a/b` is the id `a/b`), compared and ordered by
/// their UTF-8 bytes, never by Unicode order: an order the user sees belongs in the element.
public final class PersistentCollection<Element: Codable & Sendable>: StoredCollection<Element>,
  @unchecked Sendable
{
  // Unchecked because LiveData is (an open class cannot be checked): every property this class adds is
  // an immutable `let` of a Sendable type.

  let database: StoreDatabase

  init(
    name: String, database: StoreDatabase, decoding: StoredValueDecoding<Element>,
    members: [(id: String, version: Int64, element: Element)], leftOut: [String: Int64]
  ) {
    self.database = database
    super.init(name: name, decoding: decoding, members: members, absent: leftOut)
  }

  /// Writes `element` as the next version of the member `id` (the key `name/id`), creating the member if
  /// it is new.
  ///
  /// The collection, a live value of the member's key, and their observers move once it has committed;
  /// inside ``PersistentStore/transaction(isolation:_:)``, when the transaction commits. The version
  /// records the ``/PersistentLiveDataBackend/WriteAttribution/current`` in effect here.
  ///
  /// ```swift
  /// try todos.set(Todo(title: "Call Ada"), for: "call-ada")
  /// ```
  /// - Parameters:
  ///   - element: The member's new value.
  ///   - id: The member's id: not empty.
  ///   - isolation: The caller's isolation, filled in by the compiler: on the main actor, observers are
  ///     called before this returns; otherwise they are scheduled.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/invalidKey(key:reason:)`` for an empty id
  ///   or a key over the limit, or as ``PersistentLiveData/set(_:isolation:)``; nothing has changed then.
  public func set(_ element: Element, for id: String, isolation: isolated (any Actor)? = #isolation) throws {
    let key = try memberKey(id)
    try database.instrumentation.measure(.set, key: key) {
      try write(element, key: key, expectedVersion: nil, onMainActor: isolation === MainActor.shared)
    }
  }

  /// Removes the member `id`: every version of its key is deleted, as
  /// ``PersistentStore/removeKey(_:)`` does (version numbers are never reused; the removal takes the next
  /// one). Removing a member the store does not hold changes nothing.
  ///
  /// ```swift
  /// try todos.remove("milk")
  /// todos["milk"]   // nil
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - isolation: The caller's isolation, filled in by the compiler (as for ``set(_:for:isolation:)``).
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/notInTransaction(operation:)`` inside a
  ///   transaction, ``/PersistentLiveDataBackend/PersistentLiveDataError/invalidKey(key:reason:)``, or a
  ///   storage error; nothing has changed then.
  public func remove(_ id: String, isolation: isolated (any Actor)? = #isolation) throws {
    try database.removeKey(memberKey(id), onMainActor: isolation === MainActor.shared)
  }

  /// Atomically reads, transforms and writes the member `id` as its next version, starting from
  /// `defaultValue` when it is not in the collection.
  ///
  /// The transform runs without any lock held; if another write of the member (from this or another
  /// process) commits in between, it runs again on the newer value, so it must not have side effects.
  ///
  /// ```swift
  /// try todos.update("milk", default: Todo(title: "Buy milk")) { $0.done.toggle() }
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - defaultValue: The value to transform when the member does not exist.
  ///   - isolation: The caller's isolation, filled in by the compiler (as for ``set(_:for:isolation:)``).
  ///   - transform: Mutates the value in place.
  /// - Returns: The value written.
  /// - Throws: What `transform` throws, or as ``set(_:for:isolation:)``; nothing has changed then.
  @discardableResult
  public func update(
    _ id: String, default defaultValue: Element, isolation: isolated (any Actor)? = #isolation,
    _ transform: (inout Element) throws -> Void
  ) throws -> Element {
    let key = try memberKey(id)
    return try database.instrumentation.measure(.update, key: key) {
      try database.ensureWritable()
      _ = try WriteAttribution.validatedCurrent()
      while true {
        let base = currentBase(id, key: key, default: defaultValue)
        var candidate = base.value
        try transform(&candidate)
        do {
          try write(
            candidate, key: key, expectedVersion: base.version, onMainActor: isolation === MainActor.shared)
          return candidate
        } catch is StaleWrite {
          database.instrumentation.countRetry()
          try reloadMember(key)
        }
      }
    }
  }

  /// The live value of the member `id`: the same instance as
  /// `store.liveData(name + "/" + id, default: defaultValue)`, for one member's observers, history and
  /// rollback.
  ///
  /// ```swift
  /// let milk = try todos.member("milk", default: Todo(title: "Buy milk"))
  /// try milk.rollback(to: 1)   // the collection moves with it
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - defaultValue: The value while the member has no version.
  /// - Returns: The member's live value.
  /// - Throws: As ``PersistentStore/liveData(_:default:)``.
  public func member(_ id: String, default defaultValue: Element) throws -> PersistentLiveData<Element> {
    try PersistentStore(opened: database).liveData(memberKey(id), default: defaultValue)
  }

  // MARK: Internals

  /// `name/id`, checked: an id is not empty, and the key is within the limits of keys.
  func memberKey(_ id: String) throws -> String {
    let key = prefix + id
    guard !id.isEmpty else {
      throw PersistentLiveDataError.invalidKey(key: key, reason: "a collection's member id must not be empty")
    }
    try StoreKey.validate(key)
    return key
  }

  /// Commits `element` as the next version of `key`. A live value of the key, if any, decodes it in the
  /// notify phase; the collection takes the value as it was given.
  private func write(_ element: Element, key: String, expectedVersion: Int64?, onMainActor: Bool) throws {
    let payload = try decoding.encode(element, key: key)
    var write = try PendingWrite(
      key: key, payload: payload, schemaVersion: decoding.writtenSchemaVersion,
      expectedVersion: expectedVersion,
      staged: element)
    write.notifiesOnMainActor = onMainActor
    try database.commit(write)
  }

  /// What an update of member `id` starts from: what this thread's running transaction wrote last, or
  /// the collection's member (the default at the version the collection knows when it has none).
  private func currentBase(
    _ id: String, key: String, default defaultValue: Element
  ) -> (
    value: Element, version: Int64
  ) {
    if let staged = database.stagedValue(for: key), let value = staged.value as? Element {
      return (value, staged.version)
    }
    return (self[id] ?? defaultValue, memberVersion(of: id))
  }

  /// Moves the member of `key` to its newest state in the file, after an optimistic write lost to
  /// another one.
  private func reloadMember(_ key: String) throws {
    let state = try database.withConnection { connection, _ in
      try StoreDatabase.latestState(key: key, connection: connection)
    }
    let change: MemberChange
    switch state {
    case .row(let row):
      do {
        change = .written(row, staged: try decoding.decode(row))
      } catch {
        // Under the throwing policy an undecodable newer version stops the update, naming it; under a
        // lenient one the update goes on from the member's value in memory, above that version.
        guard decoding.policy != .throwError, let id = id(of: key) else { throw error }
        noteVersion(row.version, of: id)
        return
      }
    case .removed(let version): change = .removed(key: key, version: version, at: Date())
    case .never: return
    }
    apply([change], onMainActor: false).notifyObservers()
  }
}
