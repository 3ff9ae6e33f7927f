internal import Foundation

/// What is stored under one key: its newest version, how many versions are kept, when it was last written
/// and how large its value is.
///
/// ```swift
/// for stats in try inspector.keyStatistics() {
///   print("\(stats.key): v\(stats.currentVersion), \(stats.versionCount) kept")
/// }
/// ```
package struct KeyStatistics: Sendable, Equatable {
  /// The key.
  package var key: String
  /// The newest stored version.
  package var currentVersion: Int64
  /// The oldest version still stored (older ones were pruned).
  package var oldestVersion: Int64
  /// How many versions are stored.
  package var versionCount: Int
  /// When the newest version was written, in milliseconds since 1970-01-01T00:00:00Z.
  package var lastWrittenAtMilliseconds: Int64
  /// The size of the newest version's JSON payload in bytes.
  package var payloadSize: Int
  /// The size of every stored version's payload together, in bytes.
  package var totalPayloadSize: Int
  /// The ``/PersistentLiveDataBackend/PersistentValue/schemaVersion`` the newest version was written with.
  package var schemaVersion: Int = 1
}

extension StoreInspector {
  /// The statistics of every key, in the keys' byte order (the order of ``PersistentStore/keys()``).
  ///
  /// Reads every stored row once, to count versions and payload bytes.
  ///
  /// ```swift
  /// let keys = try inspector.keyStatistics().map(\.key)
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func keyStatistics() throws -> [KeyStatistics] {
    guard hasValuesTable else { return [] }
    return try reading {
      let statement = try connection.prepare(InspectionSQL.keyStatistics(schema: schemaVersionColumn))
      var result: [KeyStatistics] = []
      while try statement.step() { result.append(Self.keyStatistics(statement)) }
      return result
    }
  }

  /// The statistics of `key`.
  ///
  /// ```swift
  /// let settings = try inspector.keyStatistics(for: "settings")
  /// ```
  /// - Throws: ``InspectionError/unknownKey(path:key:)`` when no version of `key` is stored, or a
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func keyStatistics(for key: String) throws -> KeyStatistics {
    var found: KeyStatistics?
    if hasValuesTable {
      try reading {
        let statement = try connection.prepare(InspectionSQL.keyStatisticsOfKey(schema: schemaVersionColumn))
        try statement.bind(key, at: 1)
        if try statement.step() { found = Self.keyStatistics(statement) }
      }
    }
    guard let found else { throw InspectionError.unknownKey(path: path, key: key) }
    return found
  }

  /// The highest value schema version any stored version was written with (0 for a store without
  /// versions, 1 for a file older than the column).
  ///
  /// ```swift
  /// if requested > (try inspector.highestSchemaVersion()) { warnThatAppsMayNotReadIt() }
  /// ```
  package func highestSchemaVersion() throws -> Int {
    guard hasValuesTable else { return 0 }
    return try reading {
      Int(clamping: try connection.scalarInt64("SELECT max(\(schemaVersionColumn)) FROM pld_values") ?? 0)
    }
  }

  /// Every key with at least one stored version, in byte order, without reading history rows.
  ///
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func keys() throws -> [String] {
    guard hasValuesTable else { return [] }
    return try reading {
      let statement = try connection.prepare(InspectionSQL.keys)
      var keys: [String] = []
      while try statement.step() { keys.append(statement.text(0)) }
      return keys
    }
  }

  /// The newest version of every key, without reading history rows (for watching).
  ///
  /// ```swift
  /// let before = try inspector.latestVersions()   // ["settings": 7, "theme": 2]
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func latestVersions() throws -> [StoreKey: Int64] {
    guard hasValuesTable else { return [:] }
    return try reading {
      let statement = try connection.prepare(InspectionSQL.latestVersions)
      var versions: [StoreKey: Int64] = [:]
      while try statement.step() { versions[statement.text(0)] = statement.int64(1) }
      return versions
    }
  }

  /// The newest and oldest stored versions of `key`, or `nil` when none is stored.
  ///
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func versionRange(of key: String) throws -> (latest: Int64, oldest: Int64)? {
    guard hasValuesTable else { return nil }
    return try reading {
      let statement = try connection.cachedStatement(InspectionSQL.versionRange)
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      guard try statement.step(), !statement.isNull(0) else { return nil }
      return (statement.int64(0), statement.int64(1))
    }
  }

  /// The retention recorded for each key that has one (``PersistentStore/liveData(_:default:retention:)``);
  /// empty for a file older than schema version 4, which cannot record one.
  ///
  /// ```swift
  /// try inspector.recordedRetentions()   // ["flags": .all, "heartbeat": .last(100)]
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func recordedRetentions() throws -> [StoreKey: HistoryRetention] {
    guard schemaVersion >= 4 else { return [:] }
    return try reading { try StoreDatabase.recordedRetentions(connection: connection) }
  }

  private static func keyStatistics(_ statement: SQLiteStatement) -> KeyStatistics {
    KeyStatistics(
      key: statement.text(0), currentVersion: statement.int64(1), oldestVersion: statement.int64(2),
      versionCount: Int(statement.int64(3)), lastWrittenAtMilliseconds: statement.int64(5),
      payloadSize: Int(statement.int64(6)), totalPayloadSize: Int(statement.int64(4)),
      schemaVersion: Int(clamping: statement.int64(7)))
  }
}
