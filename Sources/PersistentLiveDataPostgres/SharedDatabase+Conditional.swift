import PersistentLiveDataBackend
import PostgresNIO

extension SharedDatabase {
  /// The newest version of `key` on the server (0: never written): what a conditional write that
  /// found another version reports as ``/PersistentLiveDataBackend/VersionConflict/actual``.
  ///
  /// Read only after the write's own statement refused it, so a successful conditional write costs no
  /// more round trips than a plain one.
  ///
  /// ```swift
  /// throw VersionConflict(key: key, expected: 3, actual: try await database.headVersion(of: key))
  /// ```
  func headVersion(of key: String) async throws -> Int64 {
    let hash = KeyHash.of(key)
    return try await bounded("set") { [client] in
      let rows = try await client.query(
        "SELECT version FROM pld_heads WHERE key_hash = \(hash)", logger: SharedSchema.quiet)
      for try await version in rows.decode(Int64.self) { return version }
      return 0
    }
  }

  /// The conflict that made a transaction refuse: the first conditional write whose key is not at the
  /// version it named, read after the transaction rolled back.
  ///
  /// ```swift
  /// throw try await database.conflict(among: writes)
  /// ```
  func conflict(among writes: [SharedWrite]) async throws -> VersionConflict {
    var first: VersionConflict?
    for write in writes {
      guard let expected = write.expectedVersion else { continue }
      let conflict = VersionConflict(
        key: write.key, expected: expected, actual: try await headVersion(of: write.key))
      if conflict.actual != expected { return conflict }
      // Still at the named version: an earlier write of the same transaction moved the key past it.
      first = first ?? conflict
    }
    return first ?? VersionConflict(key: writes.first?.key ?? "", expected: 0, actual: 0)
  }
}
