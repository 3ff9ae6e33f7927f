internal import Foundation

/// ``PersistentStore/removeKey(_:)``: every version of a key deleted, its numbers never reused.
///
/// One write transaction deletes the key's rows and records, in `pld_removed_keys`, the version the
/// removal takes — one above the last — which every later write of the key (in any process) continues
/// above. The key's live value in this process moves to its default at that version and its observers
/// hear of it, after the lock is released; other processes' live values do the same when they notice
/// the commit.
///
/// ```swift
/// let removedAt = try database.removeKey("session")   // nil: nothing was stored
/// ```
extension StoreDatabase {
  /// - Returns: The version the removal took; nil if the key had no stored version (nothing changed).
  @discardableResult
  func removeKey(_ key: String, onMainActor: Bool = false) throws -> Int64? {
    try ensureWritable()
    let attribution = try WriteAttribution.validatedCurrent()
    let (removed, effect) = try withConnection { connection, state -> (Int64?, CommitEffect) in
      guard state.transaction == nil else {
        throw PersistentLiveDataError.notInTransaction(operation: "removeKey")
      }
      let version = try connection.inTransaction(.immediate) { () throws -> Int64? in
        guard try Self.latestRow(key: key, connection: connection) != nil else { return nil }
        let latest = try Self.latestVersion(key: key, connection: connection)
        guard latest < Int64.max else {
          throw PersistentLiveDataError.versionsExhausted(key: key, path: displayPath)
        }
        let delete = try connection.cachedStatement(SQL.deleteKey)
        try delete.bind(key, at: 1)
        try delete.run()
        let record = try connection.cachedStatement(SQL.recordRemoval)
        try record.bind(key, at: 1)
        try record.bind(latest + 1, at: 2)
        try record.bind(StoredRow.milliseconds(Date()), at: 3)
        try record.bind(attribution, at: 4)
        try record.run()
        return latest + 1
      }
      guard let version else { return (nil, .none) }
      state.noteCommit(connection)
      let effect = instances.instance(for: key)?.receiveRemoval(version: version, onMainActor: false) ?? .none
      return (version, effect)
    }
    defer { changeSignal.signal() }
    var notified = effect
    if let removed, !collections.isEmpty {
      notified.merge(
        collections.apply([.removed(key: key, version: removed, at: Date())], onMainActor: onMainActor))
    }
    notified.notifyObservers()
    return removed
  }

  /// The newest row of `key`, or the version its removal took.
  static func latestState(key: String, connection: SQLiteConnection) throws -> StoredKeyState {
    if let row = try latestRow(key: key, connection: connection) { return .row(row) }
    let statement = try connection.cachedStatement(SQL.removedVersion)
    defer { statement.reset() }
    try statement.bind(key, at: 1)
    return try statement.step() ? .removed(version: statement.int64(0)) : .never
  }
}
