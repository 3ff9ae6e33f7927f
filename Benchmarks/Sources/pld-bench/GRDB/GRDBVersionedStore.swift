import Foundation
import GRDB

/// The GRDB contender (issue 7): the library users pick instead, writing the same versioned value the
/// way a GRDB user would — a Codable record whose `payload` property holds the value, which GRDB encodes
/// to JSON itself, inserted inside `dbQueue.write` after reading the key's `max(version)` with a cached
/// statement (the query interface would prepare a new statement on every call: about 5x raw in all).
/// Same file settings as the others: WAL and the given `synchronous` level, the raw
/// baseline's table. The only file that imports GRDB.
///
/// GRDB links the system libsqlite3 on Linux (its `GRDBSQLite` system-library target), so it runs on
/// the same SQLite as the library and the raw baseline (one `libsqlite3.so.0` in `ldd`, no sqlite3
/// symbol defined in the executable); ``sqliteVersion`` shows the version GRDB sees.
///
/// ```swift
/// let grdb = try GRDBVersionedStore(path: path, synchronous: "FULL")
/// try grdb.set(profile, key: "profile")
/// ```
final class GRDBVersionedStore {
  private let dbQueue: DatabaseQueue

  init(path: String, synchronous: String) throws {
    var configuration = Configuration()
    configuration.journalMode = .wal
    dbQueue = try DatabaseQueue(path: path, configuration: configuration)
    // GRDB's WAL setup chooses NORMAL; synchronous is a setting of the (single) connection.
    try dbQueue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
      try db.execute(sql: RawVersionedStore.schema)
      let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
      let journal = try String.fetchOne(db, sql: "PRAGMA journal_mode")
      let expected = synchronous == "FULL" ? 2 : 1
      try BenchmarkError.expect(
        level == expected && journal == "wal",
        "GRDB connection: synchronous \(level ?? -1), journal_mode \(journal ?? "?")")
    }
  }

  /// The SQLite library GRDB runs on, asked through an in-memory GRDB database.
  static var sqliteVersion: String {
    let version = try? DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") }
    return version.flatMap { $0 } ?? "unknown"
  }

  /// Commits `value` as the next version of `key` in one transaction; returns that version.
  @discardableResult
  func set<Value: Codable>(_ value: Value, key: String) throws -> Int64 {
    try dbQueue.write { db in
      let latestVersion = try db.cachedStatement(sql: "SELECT max(version) FROM t WHERE key = ?")
      let latest = try Int64.fetchOne(latestVersion, arguments: [key]) ?? 0
      let entry = Entry(
        key: key, version: latest + 1, writtenAt: Int64(Date().timeIntervalSince1970 * 1_000),
        payload: value)
      try entry.insert(db)
      return entry.version
    }
  }

  /// A row of the versioned table as a GRDB record.
  struct Entry<Payload: Codable>: Codable, FetchableRecord, PersistableRecord {
    var key: String
    var version: Int64
    var writtenAt: Int64
    /// Encoded to a JSON string by GRDB (`databaseJSONEncoder(for:)`).
    var payload: Payload

    static var databaseTableName: String { "t" }

    enum CodingKeys: String, CodingKey {
      case key, version, payload
      case writtenAt = "written_at"
    }

    /// GRDB's default JSON encoder (sorted keys) plus the library's `withoutEscapingSlashes`, so all
    /// contenders store the same bytes.
    static func databaseJSONEncoder(for column: String) -> JSONEncoder {
      let encoder = JSONEncoder()
      encoder.dataEncodingStrategy = .base64
      encoder.dateEncodingStrategy = .millisecondsSince1970
      encoder.nonConformingFloatEncodingStrategy = .throw
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      return encoder
    }
  }
}
