import Foundation
public import PersistentLiveDataBackend

/// Many values under one name, each its own key on the server, observed and followed as one live
/// dictionary by every replica.
///
/// Get one from ``PostgresStore/collection(_:of:)``. A member is an ordinary key `name/id` with its own
/// versions, history and attribution: ``PostgresStore/liveData(_:default:)`` and the inspector work on
/// it, and a member written through them, by any replica, is in the collection. `value` maps each
/// member's id to its latest value; each commit that changes members — one `set`, or a whole
/// ``PostgresStore/transaction(isolation:_:)`` — is one new `version` of the collection, and observers
/// coalesce as for any `LiveData`. Other replicas' changes arrive while ``PostgresStore/run()`` runs,
/// each costing this replica a read of the member that changed, never of the others.
///
/// ```swift
/// struct Session: Codable, Sendable { var user: String; var expires: Date }
///
/// let sessions = try await store.collection("sessions", of: Session.self)
/// try await sessions.set(Session(user: "ada", expires: .now + 3600), for: "a1b2")
/// sessions.observeForever { active in gauge.record(active.count) }
/// try await sessions.remove("a1b2")
/// ```
///
/// Ids are any non-empty string without NUL, `/` included, compared and ordered by their UTF-8 bytes.
/// A collection is read from the server only: the local cache (``PostgresStoreOptions/localCachePath``)
/// keeps live values, not collections.
public final class SharedCollection<Element: Codable & Sendable>: StoredCollection<Element>,
  @unchecked Sendable
{
  // Unchecked because LiveData is (an open class cannot be checked): every property this class adds is
  // an immutable `let` of a Sendable type.

  let database: SharedDatabase

  init(
    name: String, database: SharedDatabase, decoding: StoredValueDecoding<Element>,
    members: [(id: String, version: Int64, element: Element)], leftOut: [String: Int64]
  ) {
    self.database = database
    super.init(name: name, decoding: decoding, members: members, absent: leftOut)
  }

  /// Writes `element` as the next version of the member `id` (the key `name/id`) on the server, creating
  /// the member if it is new.
  ///
  /// Returns after the commit; by then the collection, a live value of the member's key and their
  /// observers have moved (observers are called before this returns on the main actor, scheduled
  /// elsewhere). Other replicas hear of it through the notification sent after the commit.
  ///
  /// ```swift
  /// try await sessions.set(Session(user: "ada", expires: .now + 3600), for: "a1b2")
  /// ```
  /// - Parameters:
  ///   - element: The member's new value.
  ///   - id: The member's id: not empty, without NUL.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: `PersistentLiveDataError.invalidKey(key:reason:)` for an invalid id, or as
  ///   ``SharedLiveData/set(_:isolation:)``; nothing has changed then.
  public func set(
    _ element: Element, for id: String, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    let key = try memberKey(id)
    try await database.instrumentation.measure(.set, key: key) {
      _ = try await write(element, key: key, expectedVersion: nil, operation: "set", isolation)
    }
  }

  /// Removes the member `id`: every version of its key is deleted on the server, as
  /// ``PostgresStore/removeKey(_:isolation:)`` does (the removal takes the next version; numbers are never
  /// reused). Removing a member the server does not hold changes nothing.
  ///
  /// ```swift
  /// try await sessions.remove("a1b2")
  /// sessions["a1b2"]   // nil
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: `PersistentLiveDataError.invalidKey(key:reason:)`, `WriteAttributionTooLong`, or
  ///   ``SharedStoreError``; nothing has changed then.
  public func remove(_ id: String, isolation: isolated (any Actor)? = #isolation) async throws {
    let key = try memberKey(id)
    guard let removal = try await database.removeKey(key) else { return }
    database.removalEffect(of: key, removal, onMainActor: isolation === MainActor.shared).notifyObservers()
  }

  /// Reads, transforms and writes the member `id` as its next version — atomically across replicas —
  /// starting from `defaultValue` when it is not in the collection.
  ///
  /// The transform runs without anything held on the server, on the member this replica knows; if
  /// another write of the member committed in between, the newest is read and the transform runs again,
  /// so it must not have side effects.
  ///
  /// ```swift
  /// try await sessions.update("a1b2", default: Session(user: "ada", expires: .now)) {
  ///   $0.expires += 3600
  /// }
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - defaultValue: The value to transform when the member does not exist.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - transform: Mutates the value in place.
  /// - Returns: The value written.
  /// - Throws: What `transform` throws, or as ``set(_:for:isolation:)``; nothing has changed then.
  @discardableResult
  public func update(
    _ id: String, default defaultValue: Element, isolation: isolated (any Actor)? = #isolation,
    _ transform: @escaping @Sendable (inout Element) throws -> Void
  ) async throws -> Element {
    let key = try memberKey(id)
    return try await database.instrumentation.measure(.update, key: key) {
      _ = try WriteAttribution.validatedCurrent()
      while true {
        let version = memberVersion(of: id)
        var candidate = self[id] ?? defaultValue
        try transform(&candidate)
        if try await write(candidate, key: key, expectedVersion: version, operation: "update", isolation) {
          return candidate
        }
        database.instrumentation.countRetry()
        try await reloadMember(key, id: id, isolation)
      }
    }
  }

  /// The live value of the member `id`: the same instance as
  /// `store.liveData(name + "/" + id, default: defaultValue)`, for one member's observers, history and
  /// rollback.
  ///
  /// ```swift
  /// let session = try await sessions.member("a1b2", default: Session(user: "", expires: .distantPast))
  /// for entry in try await session.history(limit: 3) { print(entry.version, entry.value.expires) }
  /// ```
  /// - Parameters:
  ///   - id: The member's id.
  ///   - defaultValue: The value while the member has no version.
  /// - Returns: The member's live value.
  /// - Throws: As ``PostgresStore/liveData(_:default:)``.
  public func member(_ id: String, default defaultValue: Element) async throws -> SharedLiveData<Element> {
    try await PostgresStore(opened: database).liveData(memberKey(id), default: defaultValue)
  }

  // MARK: Internals

  /// `name/id`, checked: an id is not empty, and the key is a valid key of a shared store.
  func memberKey(_ id: String) throws -> String {
    let key = prefix + id
    guard !id.isEmpty else {
      throw PersistentLiveDataError.invalidKey(key: key, reason: "a collection's member id must not be empty")
    }
    try PostgresStore.validate(key: key)
    return key
  }

  /// A write of `element` as the next version of `key` (after `expectedVersion`, when given).
  func stagedWrite(_ element: Element, key: String, expectedVersion: Int64?) throws -> SharedWrite {
    let payload = String(decoding: try decoding.encode(element, key: key), as: UTF8.self)
    var write = SharedWrite(
      key: key, keyHash: KeyHash.of(key), payload: payload, schemaVersion: decoding.writtenSchemaVersion)
    write.expectedVersion = expectedVersion
    write.attribution = try WriteAttribution.validatedCurrent()
    write.staged = element
    return write
  }

  /// Commits `element` as the next version of `key`; false when `expectedVersion` was no longer the
  /// latest (nothing committed then). Observers are notified on the caller's isolation.
  private func write(
    _ element: Element, key: String, expectedVersion: Int64?, operation: String,
    _ isolation: isolated (any Actor)?
  ) async throws -> Bool {
    let write = try stagedWrite(element, key: key, expectedVersion: expectedVersion)
    guard let committed = try await database.commit([write], operation: operation)?.first else {
      return false
    }
    let onMainActor = isolation === MainActor.shared
    database.applyCommitted([write], committed: [committed], onMainActor: onMainActor).notifyObservers()
    database.changeSignal.signal()
    return true
  }

  /// Moves the member of `key` to its newest state on the server, after an optimistic write lost to
  /// another one.
  private func reloadMember(_ key: String, id: String, _ isolation: isolated (any Actor)?) async throws {
    let state = try await database.latestState(key: key)
    if case .row(let row) = state {
      do {
        _ = try decoding.decode(row)
      } catch {
        // Under the throwing policy an undecodable newer version stops the update, naming it; under a
        // lenient one the update goes on from the member's value in memory, above that version.
        guard decoding.policy != .throwError else { throw error }
        noteVersion(row.version, of: id)
        return
      }
    }
    database.receive(state, of: key, onMainActor: isolation === MainActor.shared).notifyObservers()
  }
}

extension SharedDatabase {
  /// Moves the live values of the keys of `writes` and the live collections that hold them to the versions
  /// committed for them, taking each staged value as it is when the types match
  /// (`StoredLiveData.receiveCommitted(_:)`) and decoding the row otherwise; returns whom to notify.
  func applyCommitted(
    _ writes: [SharedWrite], committed: [CommittedVersion], onMainActor: Bool
  ) -> CommitEffect {
    var effect = CommitEffect.none
    for (write, version) in zip(writes, committed) {
      guard let instance = registry.instance(for: write.key) else { continue }
      let handed = CommittedWrite(committed: version, staged: write.staged, onMainActor: onMainActor)
      if let received = instance.receiveCommitted(handed) {
        effect.merge(received)
        (instance as? any SharedStaleness)?.confirm()
      } else {
        effect.merge(instance.receive(committedRow(write, version), onMainActor: onMainActor))
      }
    }
    effect.merge(collectionEffect(of: writes, committed: committed, onMainActor: onMainActor))
    return effect
  }
}
