extension StoreInspector {
  /// What changed since the last call of ``latestVersionChanges()``.
  package struct LatestVersionChanges: Sendable, Equatable {
    /// The keys whose newest version is not the one last reported, with it, in byte order of the keys.
    package var changed: [(key: String, latest: Int64)]
    /// The keys last reported that are no longer stored.
    package var removed: [String]

    package static func == (lhs: Self, rhs: Self) -> Bool {
      lhs.removed == rhs.removed
        && lhs.changed.map(\.key) == rhs.changed.map(\.key)
        && lhs.changed.map(\.latest) == rhs.changed.map(\.latest)
    }
  }

  /// The keys whose newest version changed since the last call (on the first call, every key), and the
  /// keys no longer stored (for `pld-tool serve`).
  ///
  /// The comparison runs inside SQLite, against a table of this connection's temporary schema (kept in
  /// memory, never in the file), so that a call costs a scan of the keys in SQLite and a row in Swift per
  /// changed key — with 10,000 keys, milliseconds rather than the tens of milliseconds of building and
  /// comparing ``latestVersions()`` dictionaries. Keys are compared by their bytes.
  ///
  /// ```swift
  /// let first = try inspector.latestVersionChanges()   // every key
  /// // … another process writes "settings" …
  /// let next = try inspector.latestVersionChanges()    // changed: [("settings", 8)], removed: []
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func latestVersionChanges() throws -> LatestVersionChanges {
    guard hasValuesTable else { return LatestVersionChanges(changed: [], removed: []) }
    return try reading {
      try connection.execute(Self.createSeen)
      // One snapshot of the file for both questions.
      let (changed, removed) = try inReadTransaction {
        () throws -> ([(key: String, latest: Int64)], [String]) in
        var changed: [(key: String, latest: Int64)] = []
        let changes = try connection.cachedStatement(Self.changedKeys)
        defer { changes.reset() }
        while try changes.step() { changed.append((changes.text(0), changes.int64(1))) }
        var removed: [String] = []
        let removals = try connection.cachedStatement(Self.removedKeys)
        defer { removals.reset() }
        while try removals.step() { removed.append(removals.text(0)) }
        return (changed, removed)
      }
      guard !changed.isEmpty || !removed.isEmpty else {
        return LatestVersionChanges(changed: [], removed: [])
      }
      try connection.execute("BEGIN")
      do {
        let remember = try connection.cachedStatement(Self.remember)
        for (key, latest) in changed {
          defer { remember.reset() }
          try remember.bind(key, at: 1)
          try remember.bind(latest, at: 2)
          _ = try remember.step()
        }
        let forget = try connection.cachedStatement(Self.forget)
        for key in removed {
          defer { forget.reset() }
          try forget.bind(key, at: 1)
          _ = try forget.step()
        }
        try connection.execute("COMMIT")
      } catch {
        try? connection.execute("ROLLBACK")
        throw error
      }
      return LatestVersionChanges(changed: changed, removed: removed)
    }
  }

  /// Forgets what ``latestVersionChanges()`` reported: its next call reports every key again (after a
  /// caller failed to use what it was told).
  ///
  /// ```swift
  /// do { try use(inspector.latestVersionChanges()) } catch { try? inspector.forgetLatestVersions() }
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func forgetLatestVersions() throws {
    try reading { try connection.execute("DROP TABLE IF EXISTS temp.pld_inspector_seen") }
  }

  /// The newest version of every key last reported, in this connection's temporary schema (in memory).
  private static let createSeen = """
    PRAGMA temp_store = MEMORY;
    CREATE TEMP TABLE IF NOT EXISTS pld_inspector_seen (
      key     TEXT    PRIMARY KEY,
      version INTEGER NOT NULL
    ) WITHOUT ROWID;
    """
  private static let changedKeys =
    SQL.distinctKeys + """
      SELECT key, (SELECT max(version) FROM pld_values WHERE key = k.key) FROM k WHERE key IS NOT NULL
      EXCEPT SELECT key, version FROM temp.pld_inspector_seen
      ORDER BY 1
      """
  private static let removedKeys = """
    SELECT key FROM temp.pld_inspector_seen AS seen
    WHERE NOT EXISTS (SELECT 1 FROM main.pld_values WHERE pld_values.key = seen.key)
    ORDER BY 1
    """
  private static let remember = "INSERT OR REPLACE INTO temp.pld_inspector_seen (key, version) VALUES (?, ?)"
  private static let forget = "DELETE FROM temp.pld_inspector_seen WHERE key = ?"
}
