extension PersistentLiveData {
  /// Every version of this key still kept, newest first, each with its outcome: the value, or why it
  /// does not decode.
  ///
  /// Unlike ``history(limit:)``, which throws at a version that does not decode (or, under a lenient
  /// ``/PersistentLiveDataBackend/DecodeFailurePolicy``, leaves it out and reports it), this lists them all
  /// whatever the policy, so one undecodable version never hides the others — for an undo list, a history
  /// screen or a repair tool. Versions stored with an older
  /// ``/PersistentLiveDataBackend/PersistentValue/schemaVersion`` are upgraded in memory; nothing is written.
  ///
  /// ```swift
  /// let entries = try settings.historyEntries(limit: 20)
  /// let broken = entries.filter { $0.value == nil }.map(\.version)
  /// if let good = entries.first(where: { $0.value != nil }), !broken.isEmpty {
  ///   try settings.rollback(to: good.version)
  /// }
  /// ```
  /// - Parameter limit: The most versions to return; nil for all that are kept.
  /// - Returns: The entries, newest first; empty if nothing was written yet.
  /// - Throws: A storage error only
  ///   (``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` for a damaged page);
  ///   decoding errors are in the entries.
  public func historyEntries(limit: Int? = nil) throws -> [HistoryEntry<Value>] {
    try database.history(key: key, limit: limit).map(entry)
  }

  /// The stored version `version` with its outcome: the value, or why it does not decode.
  ///
  /// ```swift
  /// if let entry = try settings.historyEntry(at: 3), case .failure(let error) = entry.result {
  ///   print(error)   // names the key, the version and its schema version
  /// }
  /// ```
  /// - Parameter version: A version number.
  /// - Returns: The entry, or nil if that version was never written or has been pruned.
  /// - Throws: A storage error only.
  public func historyEntry(at version: Int64) throws -> HistoryEntry<Value>? {
    try database.row(key: key, version: version).map(entry)
  }

  /// `row` decoded into an entry.
  private func entry(_ row: StoredRow) -> HistoryEntry<Value> {
    let result: Result<Value, PersistentLiveDataError>
    do {
      result = .success(try decoding.decode(row))
    } catch let error as PersistentLiveDataError {
      result = .failure(error)
    } catch {
      result = .failure(
        ValueCodec.undecodable(
          error, key: key, version: row.version, stored: row.schemaVersion, current: decoding.schemaVersion,
          payload: row.payload))
    }
    return HistoryEntry(
      version: row.version, writtenAt: row.writtenAt, schemaVersion: row.schemaVersion, result: result,
      attribution: row.attribution)
  }
}
