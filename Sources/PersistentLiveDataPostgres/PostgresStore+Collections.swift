import Foundation
import PersistentLiveDataBackend

extension PostgresStore {
  /// The collection `name`: the members stored on the server under the keys `name + "/" + id`, as one
  /// live dictionary that every replica's writes keep current.
  ///
  /// One instance per name and store, as for keys: asking again returns the same object while it is
  /// alive, and asking with another `Element` type throws
  /// `PersistentLiveDataError.typeMismatch(key:existing:requested:)`. Opening reads only the
  /// collection's members — one statement, served by an index on the keys' first characters — never the
  /// rest of the store. A member that does not decode follows the store's `DecodeFailurePolicy`: with
  /// `.throwError` the open throws, naming the member's key and version; with `.lastDecodable` the member
  /// holds its newest version that decodes; with `.useDefault` it is left out.
  ///
  /// ```swift
  /// struct Session: Codable, Sendable { var user: String; var expires: Date }
  /// let sessions = try await store.collection("sessions", of: Session.self)
  /// try await sessions.set(Session(user: "ada", expires: .now + 3600), for: "a1b2")   // key "sessions/a1b2"
  /// ```
  /// - Parameters:
  ///   - name: The collection's name: any non-empty key (it may hold `/`: `account/7/sessions`).
  ///   - type: The members' type (inferred when the result's type is known).
  /// - Returns: The live collection.
  /// - Throws: `PersistentLiveDataError.invalidKey(key:reason:)` for an empty or invalid name,
  ///   `PersistentLiveDataError.typeMismatch(key:existing:requested:)`, a decoding error under
  ///   `.throwError`, or ``SharedStoreError``.
  public func collection<Element: Codable & Sendable>(
    _ name: String, of type: Element.Type = Element.self
  ) async throws -> SharedCollection<Element> {
    guard !name.isEmpty else {
      throw PersistentLiveDataError.invalidKey(key: name, reason: "a collection's name must not be empty")
    }
    try Self.validate(key: name + "/")
    let registry = database.collections
    if let existing = try registry.collection(
      of: SharedCollection<Element>.self, named: name, elementType: Element.self)
    {
      return existing
    }
    let prefix = name + "/"
    let noticed = database.changeSignal.generation
    let (horizon, rows) = try await database.memberRows(prefix: prefix)
    let decoding = StoredValueDecoding<Element>(
      key: name, policy: database.options.onUndecodable, logger: database.options.logger,
      events: database.events, instrumentation: database.instrumentation)
    var members: [(id: String, version: Int64, element: Element)] = []
    var leftOut: [String: Int64] = [:]
    members.reserveCapacity(rows.count)
    for row in rows {
      guard let id = MemberKey.id(of: row.key, prefix: prefix) else { continue }
      if let element = try await restore(row, decoding: decoding) {
        members.append((id, row.version, element))
      } else {
        leftOut[id] = row.version
      }
    }
    let created = SharedCollection(
      name: name, database: database, decoding: decoding, members: members, leftOut: leftOut)
    let live = try registry.register(created, named: name, elementType: Element.self)
    // Whatever the read did not see, the periodic catch-up looks for from before it.
    database.changeFeed.lower(to: horizon)
    guard live === created, database.changeSignal.generation != noticed else { return live }
    // A notification came while the collection was not registered yet: what changed since the read is
    // read now rather than at the next catch-up.
    let (_, changed) = try await database.changedHeads(since: horizon)
    for (key, version) in changed.values where (live.memberVersion(ofKey: key) ?? .max) < version {
      database.receive(try await database.latestState(key: key), of: key).notifyObservers()
    }
    return live
  }

  /// The member `row` restores to under the decode-failure policy; nil when it is left out.
  private func restore<Element>(
    _ row: StoredRow, decoding: StoredValueDecoding<Element>
  ) async throws -> Element? {
    do {
      return try decoding.restoreMember(latest: row, history: { throw HistoryNeeded() })
    } catch is HistoryNeeded {
      // Only under `.lastDecodable`, for a newest version that does not decode: read its history.
      let history = try await database.history(key: row.key, limit: nil)
      return try decoding.restoreMember(latest: row, history: { history })
    }
  }

  /// The live keys on the server that start with `prefix` (written and not removed), in UTF-8 byte
  /// order.
  ///
  /// Reads the prefix's range of keys only, through the index on the keys' first characters. An empty
  /// prefix lists every key.
  ///
  /// ```swift
  /// try await store.keys(prefix: "sessions/")   // ["sessions/a1b2", "sessions/c3d4"]
  /// ```
  /// - Parameter prefix: The start of the keys, compared by bytes.
  /// - Returns: The keys, sorted by their UTF-8 bytes.
  /// - Throws: ``SharedStoreError``.
  public func keys(prefix: String) async throws -> [String] {
    try await database.keys(prefix: prefix)
  }

  /// Removes `key` on the server: every version of it is deleted, and the removal takes the next version
  /// number, which a later write continues above (numbers are never reused).
  ///
  /// Then the key is gone from ``keys()``, its live value goes back to its default (at the removal's
  /// version) and notifies, the collections that hold it lose the member — on every replica, as for a
  /// write — and ``SharedCollection/changes(since:)`` delivers the removal. The removal records the
  /// `WriteAttribution.current` in effect here. Removing a key that has no version changes nothing.
  ///
  /// ```swift
  /// try await store.removeKey("sessions/a1b2")
  /// ```
  /// - Parameters:
  ///   - key: The key.
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: `PersistentLiveDataError.invalidKey(key:reason:)`, `WriteAttributionTooLong`, or
  ///   ``SharedStoreError``; nothing has changed then.
  public func removeKey(_ key: String, isolation: isolated (any Actor)? = #isolation) async throws {
    try Self.validate(key: key)
    guard let removal = try await database.removeKey(key) else { return }
    database.removalEffect(of: key, removal, onMainActor: isolation === MainActor.shared).notifyObservers()
  }
}

extension SharedTransaction {
  /// Stages `element` as the next version of the member `id` of `collection`; it is written when the
  /// transaction commits, together with everything else staged, and the collection's observers see the
  /// transaction's members as one new version.
  ///
  /// ```swift
  /// try await store.transaction { transaction in
  ///   try transaction.set(Session(user: "ada", expires: .now + 3600), for: "a1b2", in: sessions)
  ///   try transaction.set(activeUsers, to: users + ["ada"])
  /// }
  /// ```
  /// - Parameters:
  ///   - element: The member's new value.
  ///   - id: The member's id.
  ///   - collection: A collection of the same store.
  /// - Throws: ``SharedStoreError/foreignValue(key:)`` for a collection of another store,
  ///   `PersistentLiveDataError.invalidKey(key:reason:)`, or an encoding error.
  public func set<Element>(
    _ element: Element, for id: String, in collection: SharedCollection<Element>
  ) throws {
    guard collection.database === database else { throw SharedStoreError.foreignValue(key: collection.name) }
    let key = try collection.memberKey(id)
    stage(try collection.stagedWrite(element, key: key, expectedVersion: nil))
  }
}

/// Thrown by a history that a member's restore asks for: it is read from the server, and the restore
/// runs again with it.
private struct HistoryNeeded: Error {}
