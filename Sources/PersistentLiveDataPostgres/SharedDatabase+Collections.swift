import Foundation
import PersistentLiveDataBackend
import PostgresNIO

/// What collections, prefixes and removals do on the server (``SharedStatements`` has their SQL), and
/// how a commit or a change read from the server reaches the live collections.
///
/// ```swift
/// let (horizon, rows) = try await database.memberRows(prefix: "todo/")
/// try await database.removeKey("todo/milk", onMainActor: false)
/// ```
extension SharedDatabase {
  // MARK: Reads

  /// The newest state of `key` on the server: its newest row, the version its removal took, or nothing.
  func latestState(key: String, via route: ReadRoute = .pool) async throws -> StoredKeyState {
    try await ensureSchema()
    let state = try await bounded("read") { [client] in
      let rows = try await route.query(SharedStatements.state(keyHash: KeyHash.of(key)), client: client)
      for try await (head, version, payload, schemaVersion, milliseconds, author, reason) in rows.decode(
        (Int64, Int64?, String?, Int?, Int64?, String?, String?).self)
      {
        guard let version, let payload, let schemaVersion, let milliseconds else {
          return StoredKeyState.removed(version: head)
        }
        return .row(
          StoredRow(
            key: key, version: version, writtenAtMilliseconds: milliseconds, payload: Data(payload.utf8),
            schemaVersion: schemaVersion, attribution: WriteAttribution(storedAuthor: author, reason: reason))
        )
      }
      return .never
    }
    switch state {
    case .row(let row): cache?.record(row)
    case .removed(let version): cache?.recordRemoval(key: key, version: version)
    case .never: break
    }
    return state
  }

  /// The newest row of every live key that starts with `prefix`, and the horizon of the snapshot that
  /// read them: a change they miss was made by a transaction with an id of at least that horizon.
  func memberRows(prefix: String) async throws -> (horizon: Int64, rows: [StoredRow]) {
    try await ensureSchema()
    return try await bounded("collection") { [client] in
      var horizon: Int64?
      var rows: [StoredRow] = []
      let sequence = try await client.query(
        SharedStatements.members(prefix: prefix), logger: SharedSchema.quiet)
      for try await (seen, key, version, payload, schemaVersion, milliseconds, author, reason)
        in sequence.decode(
          (Int64, String?, Int64?, String?, Int?, Int64?, String?, String?).self)
      {
        horizon = seen
        guard let key, let version, let payload, let schemaVersion, let milliseconds else { continue }
        rows.append(
          StoredRow(
            key: key, version: version, writtenAtMilliseconds: milliseconds, payload: Data(payload.utf8),
            schemaVersion: schemaVersion, attribution: WriteAttribution(storedAuthor: author, reason: reason))
        )
      }
      guard let horizon else {
        throw SharedStoreError.serverUnavailable(
          operation: "collection", reason: "no snapshot horizon returned")
      }
      return (horizon, rows)
    }
  }

  /// The live keys that start with `prefix`, in UTF-8 byte order.
  func keys(prefix: String) async throws -> [String] {
    try await ensureSchema()
    return try await bounded("keys") { [client] in
      var keys: [String] = []
      let rows = try await client.query(SharedStatements.keys(prefix: prefix), logger: SharedSchema.quiet)
      for try await key in rows.decode(String.self) { keys.append(key) }
      return keys
    }
  }

  /// The server's current snapshot, as text.
  func currentSnapshot() async throws -> String {
    try await ensureSchema()
    return try await bounded("changes") { [client] in
      let rows = try await client.query(SharedStatements.snapshot, logger: SharedSchema.quiet)
      for try await snapshot in rows.decode(String.self) { return snapshot }
      throw SharedStoreError.serverUnavailable(operation: "changes", reason: "no snapshot returned")
    }
  }

  /// At most `limit` members of `prefix` above `after`, each with its newest row visible in `snapshot`.
  func memberRows(
    prefix: String, asOf snapshot: String, after: String, limit: Int
  ) async throws -> [StoredRow] {
    try await bounded("changes") { [client] in
      var rows: [StoredRow] = []
      let sequence = try await client.query(
        SharedStatements.members(prefix: prefix, asOf: snapshot, after: after, limit: limit),
        logger: SharedSchema.quiet)
      for try await (key, version, payload, schemaVersion, milliseconds, author, reason) in sequence.decode(
        (String, Int64, String, Int, Int64, String?, String?).self)
      {
        rows.append(
          StoredRow(
            key: key, version: version, writtenAtMilliseconds: milliseconds, payload: Data(payload.utf8),
            schemaVersion: schemaVersion, attribution: WriteAttribution(storedAuthor: author, reason: reason))
        )
      }
      return rows
    }
  }

  /// A change of a delta (``SharedStatements/delta(prefix:since:through:after:limit:)``).
  struct DeltaChange: Sendable {
    let change: MemberChange
    let attribution: WriteAttribution?
    let position: SharedStatements.DeltaPosition
  }

  /// At most `limit` changes of the keys of `prefix` committed after the snapshot `since` and visible
  /// in `through`, after `position`.
  func delta(
    prefix: String, since: String, through: String, after position: SharedStatements.DeltaPosition?,
    limit: Int
  ) async throws -> [DeltaChange] {
    try await bounded("changes") { [client] in
      var changes: [DeltaChange] = []
      let sequence = try await client.query(
        SharedStatements.delta(prefix: prefix, since: since, through: through, after: position, limit: limit),
        logger: SharedSchema.quiet)
      for try await (key, version, removed, payload, schemaVersion, milliseconds, author, reason)
        in sequence
        .decode((String, Int64, Bool, String?, Int?, Int64, String?, String?).self)
      {
        let attribution = WriteAttribution(storedAuthor: author, reason: reason)
        let change: MemberChange
        if removed {
          change = .removed(
            key: key, version: version, at: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        } else {
          change = .written(
            StoredRow(
              key: key, version: version, writtenAtMilliseconds: milliseconds,
              payload: Data((payload ?? "").utf8),
              schemaVersion: schemaVersion ?? 1, attribution: attribution),
            staged: nil)
        }
        changes.append(
          DeltaChange(
            change: change, attribution: attribution,
            position: .init(key: key, version: version, removed: removed)))
      }
      return changes
    }
  }

  // MARK: Removal

  /// Removes `key` on the server: every version deleted, the removal taking the next version; other
  /// replicas are notified. Nothing happens for a key that has no version. The caller applies
  /// ``removalEffect(of:_:onMainActor:)`` on its isolation.
  ///
  /// - Returns: The version the removal took and when; nil when the key had none.
  func removeKey(_ key: String) async throws -> (version: Int64, at: Date)? {
    try await ensureWritable()
    let attribution = try WriteAttribution.validatedCurrent()
    let hash = KeyHash.of(key)
    let removed = try await bounded("removeKey") { [client] in
      try await client.withConnection { connection -> (Int64, Int64)? in
        try await connection.query("BEGIN", logger: SharedSchema.quiet)
        do {
          // Locked first: the removal's own snapshot then sees every write that held the row before.
          _ = try await connection.query(SharedStatements.lockHead(keyHash: hash), logger: SharedSchema.quiet)
            .collect()
          var removed: (Int64, Int64)?
          for try await row in try await connection.query(
            SharedStatements.remove(keyHash: hash, attribution: attribution), logger: SharedSchema.quiet
          ).decode((Int64, Int64).self) {
            removed = row
          }
          try await connection.query("COMMIT", logger: SharedSchema.quiet)
          return removed
        } catch {
          _ = try? await connection.query("ROLLBACK", logger: SharedSchema.quiet)
          throw error
        }
      }
    }
    guard let (version, milliseconds) = removed else { return nil }
    notifier.send([SharedNotification(key: key, keyHash: hash, version: version, origin: origin)])
    return (version, Date(timeIntervalSince1970: Double(milliseconds) / 1000))
  }

  /// Moves the live value of a removed key to its default and the collections that hold it past the
  /// member, and wakes `changes` readers; returns whom to notify.
  func removalEffect(of key: String, _ removal: (version: Int64, at: Date), onMainActor: Bool) -> CommitEffect
  {
    defer { changeSignal.signal() }
    cache?.recordRemoval(key: key, version: removal.version)
    var effect =
      registry.instance(for: key)?.receiveRemoval(version: removal.version, onMainActor: onMainActor) ?? .none
    effect.merge(
      collections.apply(
        [.removed(key: key, version: removal.version, at: removal.at)], onMainActor: onMainActor))
    return effect
  }

  // MARK: Applying changes

  /// Moves the live collections that hold keys of `writes` to the versions committed for them; returns
  /// whom to notify. A write's staged value is taken as it is when a collection has its type.
  func collectionEffect(
    of writes: [SharedWrite], committed: [CommittedVersion], onMainActor: Bool
  ) -> CommitEffect {
    guard !collections.isEmpty else { return .none }
    let changes = zip(writes, committed).map { write, version in
      MemberChange.written(committedRow(write, version), staged: write.staged)
    }
    return collections.apply(changes, onMainActor: onMainActor)
  }

  /// The row a write committed as `version`.
  func committedRow(_ write: SharedWrite, _ version: CommittedVersion) -> StoredRow {
    StoredRow(
      key: write.key, version: version.version, writtenAtMilliseconds: version.writtenAtMilliseconds,
      payload: Data(write.payload.utf8), schemaVersion: write.schemaVersion, attribution: write.attribution)
  }

  /// Moves the live value of `key` and the collections that hold it to `state`, read from the server;
  /// returns whom to notify.
  func receive(_ state: StoredKeyState, of key: String, onMainActor: Bool = false) -> CommitEffect {
    receive([(key, state)], onMainActor: onMainActor)
  }

  /// ``receive(_:of:onMainActor:)`` of several keys: each live value moves, then the live collections
  /// that hold any of them move once, as one new version.
  func receive(_ states: [(key: String, state: StoredKeyState)], onMainActor: Bool = false) -> CommitEffect {
    var effect = CommitEffect.none
    var changes: [MemberChange] = []
    let now = Date()
    for (key, state) in states {
      let instance = registry.instance(for: key)
      if let instance { effect.merge(state.apply(to: instance, onMainActor: onMainActor)) }
      // The server answered for the key: it is confirmed before anyone hears of the version it brought.
      (instance as? any SharedStaleness)?.confirm()
      if !collections.isEmpty, let change = state.memberChange(key: key, at: now) { changes.append(change) }
    }
    if !changes.isEmpty { effect.merge(collections.apply(changes, onMainActor: onMainActor)) }
    return effect
  }
}
