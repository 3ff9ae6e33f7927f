extension PersistentStore {
  /// The collection `name`: the members stored under the keys `name + "/" + id`, as one live dictionary.
  ///
  /// One instance per name and store, as for keys: asking again returns the same object while it is alive,
  /// and asking with another `Element` type throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/typeMismatch(key:existing:requested:)``. Opening
  /// reads only the collection's members (one seek each, by their key range), never the rest of the store. A
  /// member that does not decode follows the store's ``/PersistentLiveDataBackend/DecodeFailurePolicy``: with
  /// ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError`` the open throws, naming the member's key
  /// and version; with ``/PersistentLiveDataBackend/DecodeFailurePolicy/lastDecodable`` the member holds its
  /// newest version that decodes; with ``/PersistentLiveDataBackend/DecodeFailurePolicy/useDefault`` it is
  /// left out. Each fallback is reported on ``events()``.
  ///
  /// The first open by a writable store records the name in the file, so that from then on every
  /// change of a member, by any writer, is logged for ``PersistentCollection/changes(since:)``.
  ///
  /// ```swift
  /// struct Todo: Codable, Sendable { var title: String; var done = false }
  /// let todos = try store.collection("todo", of: Todo.self)
  /// try todos.set(Todo(title: "Buy milk"), for: "milk")   // key "todo/milk"
  /// todos.observe(owner: screen) { members in screen.count = members.count }
  /// ```
  /// - Parameters:
  ///   - name: The collection's name; any non-empty key (it may hold `/`: `account/7/sessions`).
  ///   - type: The members' type (inferred when the result's type is known).
  /// - Returns: The live collection.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/invalidKey(key:reason:)`` for an empty or
  ///   invalid name,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/typeMismatch(key:existing:requested:)``, a
  ///   decoding error under ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError``,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error.
  public func collection<Element: Codable & Sendable>(
    _ name: String, of type: Element.Type = Element.self
  ) throws -> PersistentCollection<Element> {
    guard !name.isEmpty else {
      throw PersistentLiveDataError.invalidKey(key: name, reason: "a collection's name must not be empty")
    }
    try StoreKey.validate(name + "/")
    let registry = database.collections
    if let existing = try registry.collection(
      of: PersistentCollection<Element>.self, named: name, elementType: Element.self)
    {
      try database.ensureOpen()
      return existing
    }
    try database.recordCollection(name)
    let prefix = name + "/"
    let (rows, _, changeCount) = try database.memberRows(prefix: prefix, after: nil)
    // Decoding runs user code: outside the store's lock.
    let decoding = StoredValueDecoding<Element>(
      key: name, policy: options.onUndecodable, logger: options.logger, events: database.events,
      instrumentation: database.instrumentation)
    var members: [(id: String, version: Int64, element: Element)] = []
    var leftOut: [String: Int64] = [:]
    members.reserveCapacity(rows.count)
    for row in rows {
      guard let id = MemberKey.id(of: row.key, prefix: prefix) else { continue }
      if let element = try decoding.restoreMember(
        latest: row, history: { try database.history(key: row.key, limit: nil) })
      {
        members.append((id, row.version, element))
      } else {
        leftOut[id] = row.version
      }
    }
    let created = PersistentCollection(
      name: name, database: database, decoding: decoding, members: members, leftOut: leftOut)
    let (live, differences) = try database.register(created, elementType: Element.self, readAt: changeCount)
    // Changes committed between the read and the registration found no collection to move: apply them.
    live.apply(differences, onMainActor: false).notifyObservers()
    return live
  }

  /// The keys that start with `prefix`, in UTF-8 byte order; each has at least one stored version.
  ///
  /// Reads the prefix's range of keys only: one seek per key found. An empty prefix lists every key.
  ///
  /// ```swift
  /// try store.keys(prefix: "todo/")   // ["todo/bread", "todo/milk"]
  /// ```
  /// - Parameter prefix: The start of the keys, compared by bytes.
  /// - Returns: The keys, sorted by their UTF-8 bytes.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error.
  public func keys(prefix: String) throws -> [String] {
    try database.keys(prefix: prefix)
  }
}

extension StoreDatabase {
  /// Registers a new live collection created from rows read at `changeCount`, and returns the one that
  /// is live, with what changed in the store since (the caller applies it with the lock released).
  func register<Element>(
    _ created: PersistentCollection<Element>, elementType: Element.Type, readAt changeCount: UInt64
  ) throws -> (PersistentCollection<Element>, differences: [MemberChange]) {
    try withConnectionInReadWindow { connection, state in
      let live = try collections.register(created, named: created.name, elementType: elementType)
      guard live === created, state.changeCount != changeCount else { return (live, []) }
      return (live, try Self.memberDifferences(of: created, connection: connection))
    }
  }
}
