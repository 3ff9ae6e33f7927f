package import Foundation

/// Raw-JSON operations for `pld-tool`, going through the same write path as an app's `set`: the same
/// versioning, retention and error handling, and live values of this process are moved along.
extension PersistentStore {
  /// Validates `json`, stores it in the library's format (sorted keys) as the next version of `key`,
  /// and returns that version.
  ///
  /// - Parameter schemaVersion: The ``/PersistentLiveDataBackend/PersistentValue/schemaVersion`` to record
  ///   (at least 1); nil for the schema version of the key's newest version (1 for a new key), read in the
  ///   write transaction.
  ///
  /// With `expectedVersion`, only if the key is still at that version (0: it has none).
  ///
  /// - Throws: ``/PersistentLiveDataBackend/VersionConflict`` when the key is at another version than
  ///   `expectedVersion` (nothing is written then), or as a write.
  package func setJSON(
    _ json: Data, forKey key: String, schemaVersion: Int? = nil, ifVersion expectedVersion: Int64? = nil
  ) throws -> Int64 {
    try StoreKey.validate(key)
    let payload = try Self.canonicalJSON(json, key: key)
    return try writeRaw(
      payload, key: key, schemaVersion: schemaVersion.map { max(1, $0) }, ifVersion: expectedVersion)
  }

  /// Stores `json` as `version` of `key`, written at `writtenAtMilliseconds`, with `schemaVersion`: a
  /// faithful restore of an exported version (`pld-tool import` into a store without the key).
  ///
  /// `attribution` is the exported version's, recorded as it is (nil stays nil), whatever
  /// ``/PersistentLiveDataBackend/WriteAttribution/current`` is.
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/unknownVersion(key:version:)`` when
  ///   `version` is not above the key's newest version (numbers are never reused or reordered),
  ///   ``/PersistentLiveDataBackend/WriteAttributionTooLong``; nothing is written then.
  package func restoreJSON(
    _ json: Data, forKey key: String, version: Int64, writtenAtMilliseconds: Int64, schemaVersion: Int?,
    attribution: WriteAttribution? = nil
  ) throws {
    try StoreKey.validate(key)
    try attribution?.validate()
    let payload = try Self.canonicalJSON(json, key: key)
    var write = try WriteAttribution.$current.withValue(nil) {
      try PendingWrite(key: key, payload: payload, schemaVersion: schemaVersion.map { max(1, $0) })
    }
    write.attribution = attribution.flatMap { $0.isEmpty ? nil : $0 }
    write.restoring = (version, Date(timeIntervalSince1970: Double(writtenAtMilliseconds) / 1_000))
    do {
      try database.commit(write)
    } catch is StaleWrite {
      throw PersistentLiveDataError.unknownVersion(key: key, version: version)
    }
  }

  /// The newest version of `key` — of its newest row, or the one its removal took — or 0 for a key
  /// never written.
  package func headVersion(of key: String) throws -> Int64 {
    try database.withConnection { connection, _ in
      try StoreDatabase.keyHead(key: key, connection: connection).latest
    }
  }

  /// Writes the content of `version` of `key` as a new version, with that version's schema version
  /// (raw JSON cannot be upgraded without the type), and returns it.
  ///
  /// With `expectedVersion`, only if the key is still at that version (the inspector's `If-Match`).
  ///
  /// - Throws: ``/PersistentLiveDataBackend/VersionConflict`` when the key is at another version than
  ///   `expectedVersion` (nothing is written then),
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/unknownVersion(key:version:)``, or as a write.
  package func rollbackJSON(
    key: String, to version: Int64, ifVersion expectedVersion: Int64? = nil
  ) throws
    -> Int64
  {
    guard let row = try database.row(key: key, version: version) else {
      throw PersistentLiveDataError.unknownVersion(key: key, version: version)
    }
    return try writeRaw(row.payload, key: key, schemaVersion: row.schemaVersion, ifVersion: expectedVersion)
  }

  /// Deletes all but the newest `keep` versions (at least 1) of `key`, or of every key, in one
  /// transaction — but never what a key's recorded retention keeps; with `keep` nil, what each key's
  /// recorded retention no longer keeps. Version numbers are never reused afterwards.
  package func prune(key: String?, keep: Int?) throws -> PruneOutcome {
    try database.prune(key: key, keep: keep.map { Int64(max(1, $0)) })
  }

  /// The recorded retention of every key that has one (see ``liveData(_:default:retention:)``).
  package func recordedRetentions() throws -> [StoreKey: HistoryRetention] {
    try database.recordedRetentions()
  }

  /// Kept versions of `key`, newest first, as stored.
  package func rows(key: String, limit: Int? = nil) throws -> [StoredRow] {
    try database.history(key: key, limit: limit)
  }

  /// Commits raw JSON: the key's live instance in this process, if any, decodes it after the commit,
  /// outside the store's lock (see ``PendingWrite``).
  private func writeRaw(
    _ payload: Data, key: String, schemaVersion: Int?, ifVersion expectedVersion: Int64? = nil
  ) throws -> Int64 {
    let write = try PendingWrite(
      key: key, payload: payload, schemaVersion: schemaVersion, expectedVersion: expectedVersion)
    do {
      return try database.commit(write)
    } catch let stale as StaleWrite {
      throw VersionConflict(key: key, expected: expectedVersion ?? 0, actual: stale.currentVersion)
    }
  }

  /// `json` re-serialized compactly with unescaped slashes and object keys in the order the library's
  /// own encoder writes them (``ValueCodec``: `JSONEncoder`'s `.sortedKeys`, plain `String` order), so
  /// that a value written by `pld-tool` is stored in the same bytes as the same value written by an app;
  /// or `encodingFailed` if it is not JSON, `valueTooDeep` if it nests deeper than ``JSONDepth/limit``
  /// (measured before anything recurses over it).
  ///
  /// (`JSONSerialization`'s own `.sortedKeys` orders keys differently on Linux — numbers within keys by
  /// value, case ignored — so objects are written here; the leaves are still `JSONSerialization`'s.)
  static func canonicalJSON(_ json: Data, key: String) throws -> Data {
    let depth = JSONDepth.deepest(in: json)
    guard depth <= JSONDepth.limit else { throw PersistentLiveDataError.valueTooDeep(key: key, depth: depth) }
    do {
      let object = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
      var output = Data()
      try writeCanonical(object, to: &output)
      return output
    } catch {
      throw PersistentLiveDataError.encodingFailed(key: key, reason: "the text is not valid JSON")
    }
  }

  private static func writeCanonical(_ object: Any, to output: inout Data) throws {
    switch object {
    case let dictionary as [String: Any]:
      output.append(UInt8(ascii: "{"))
      for (index, member) in dictionary.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        try writeCanonical(member.key, to: &output)
        output.append(UInt8(ascii: ":"))
        try writeCanonical(member.value, to: &output)
      }
      output.append(UInt8(ascii: "}"))
    case let array as [Any]:
      output.append(UInt8(ascii: "["))
      for (index, element) in array.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        try writeCanonical(element, to: &output)
      }
      output.append(UInt8(ascii: "]"))
    default:
      output.append(
        try JSONSerialization.data(
          withJSONObject: object, options: [.withoutEscapingSlashes, .fragmentsAllowed]))
    }
  }
}

extension PersistentStore {
  /// What the checks for other connections' commits read so far: how many keys each reloaded, which
  /// follows what other connections changed, not how many keys are live.
  ///
  /// ```swift
  /// let before = store.externalCheckStatistics.keysRead
  /// ```
  var externalCheckStatistics: ExternalCheckStatistics {
    database.externalCheckStatistics.withLock { $0 }
  }
}
