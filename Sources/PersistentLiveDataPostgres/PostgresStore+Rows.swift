import Foundation
import PersistentLiveDataBackend
import PostgresNIO

/// The store's rows as they are on the server, never decoded into a type: what `pld-tool serve
/// --postgres` shows and edits. Any version of any value schema is read, and a rollback writes the old
/// row's text and schema version as they are.
///
/// ```swift
/// let snapshot = try await store.currentSnapshot()
/// let rows = try await store.latestRows(asOf: snapshot)
/// for try await change in store.rowChanges(after: snapshot) { show(change) }
/// ```
extension PostgresStore {
  /// The server's current snapshot (`pg_current_snapshot()` as text): a listing made as of it and the
  /// changes after it meet without a gap or an overlap.
  package func currentSnapshot() async throws -> String {
    try await database.currentSnapshot()
  }

  /// The newest row of every key (written, not removed) as of `snapshot`, in UTF-8 byte order.
  package func latestRows(asOf snapshot: String) async throws -> [StoredRow] {
    var rows: [StoredRow] = []
    var after = ""
    while true {
      let page = try await database.memberRows(prefix: "", asOf: snapshot, after: after, limit: 2_048)
      rows += page
      guard page.count == 2_048, let last = page.last else { return rows }
      after = last.key
    }
  }

  /// How many versions the server keeps of each of `keys` (every key when nil).
  package func versionCounts(of keys: [String]?) async throws -> [String: Int] {
    try await database.ensureSchema()
    let hashes = keys?.map(KeyHash.of)
    return try await database.bounded("history") { [client = database.client] in
      let query: PostgresQuery =
        hashes.map {
          """
          SELECT h.key, count(*) FROM pld_heads h JOIN pld_values v ON v.key_hash = h.key_hash
          WHERE h.key_hash = ANY(\($0)) GROUP BY h.key
          """
        }
        ?? "SELECT h.key, count(*) FROM pld_heads h JOIN pld_values v ON v.key_hash = h.key_hash GROUP BY h.key"
      var counts: [String: Int] = [:]
      for try await (key, count) in try await client.query(query, logger: SharedSchema.quiet).decode(
        (String, Int64).self)
      {
        counts[key] = Int(count)
      }
      return counts
    }
  }

  /// The newest `limit` rows of `key` (all when nil), newest first.
  package func rows(of key: String, limit: Int?) async throws -> [StoredRow] {
    try await database.ensureSchema()
    return try await database.history(key: key, limit: limit)
  }

  /// Every version written and every removal committed after `snapshot`, by any replica, each once, in
  /// steps of the server's snapshots (see ``SharedPrefixReader``). Other replicas' commits are looked for
  /// when this store hears of one (``run()`` listens) and at every periodic catch-up. Ends when the task
  /// is cancelled.
  package func rowChanges(after snapshot: String) -> AsyncThrowingStream<MemberChange, any Error> {
    let reader = SharedPrefixReader(
      database: database, prefix: "", from: .waiting(since: snapshot, generation: nil))
    return AsyncThrowingStream(unfolding: {
      guard case .changed(let change, _, _) = try await reader.next() else { return nil }
      return change.change
    })
  }

  /// Writes the text and schema version of `key`'s version `version` as its next version, attributed to
  /// ``/PersistentLiveDataBackend/WriteAttribution/current`` — only while the key is at `expected` when it is
  /// given.
  ///
  /// - Returns: The version written.
  /// - Throws: `PersistentLiveDataError.unknownVersion(key:version:)` when the server does not keep
  ///   that version, `VersionConflict` when the key moved past `expected` (nothing written), or
  ///   ``SharedStoreError``.
  package func rollbackRow(key: String, to version: Int64, ifVersion expected: Int64?) async throws -> Int64 {
    try Self.validate(key: key)
    guard let row = try await database.row(key: key, version: version) else {
      throw PersistentLiveDataError.unknownVersion(key: key, version: version)
    }
    var write = SharedWrite(
      key: key, keyHash: KeyHash.of(key), payload: String(decoding: row.payload, as: UTF8.self),
      schemaVersion: row.schemaVersion)
    write.expectedVersion = expected
    write.attribution = try WriteAttribution.validatedCurrent()
    guard let committed = try await database.commit([write], operation: "rollback")?.first else {
      throw VersionConflict(
        key: key, expected: expected ?? 0, actual: try await database.headVersion(of: key))
    }
    // A live value of the key in this store (and the collections that hold it) moves as for a read.
    database.receive(.row(database.committedRow(write, committed)), of: key).notifyObservers()
    database.changeSignal.signal()
    return committed.version
  }
}
