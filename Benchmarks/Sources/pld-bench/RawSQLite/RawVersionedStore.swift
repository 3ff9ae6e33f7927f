import Foundation

/// The raw-SQLite contender: what a hand-written client does to store versioned JSON values, in the
/// library's schema shape and with the library's pragmas — the cost floor the library is compared with.
///
/// Writing a value is `JSONEncoder` (sorted keys, as the library encodes) + `BEGIN IMMEDIATE` +
/// `SELECT max(version)` + `INSERT` + `COMMIT`, all prepared once.
///
/// ```swift
/// let raw = try RawVersionedStore(path: path, synchronous: "FULL")
/// try raw.set(profile, key: "profile")
/// ```
final class RawVersionedStore {
  /// The schema of the benchmark brief: `pld_values` without its CHECK constraint, under another name.
  static let schema = """
    CREATE TABLE IF NOT EXISTS t(
      key TEXT NOT NULL, version INTEGER NOT NULL, written_at INTEGER NOT NULL, payload TEXT NOT NULL,
      PRIMARY KEY(key, version)) WITHOUT ROWID
    """

  private let database: RawDatabase
  private let encoder = RawVersionedStore.makeEncoder()
  private let begin: RawStatement
  private let commit: RawStatement
  private let latestVersion: RawStatement
  private let insert: RawStatement

  /// Opens `path` and writes into `table`: `t` (created here, the benchmark's own schema), or
  /// `pld_values` of a file the library made, its triggers firing as they do for the library's writes.
  init(path: String, synchronous: String, table: String = "t") throws {
    database = try RawDatabase(path: path)
    try database.configure(synchronous: synchronous)
    if table == "t" { try database.execute(Self.schema) }
    begin = try database.prepare("BEGIN IMMEDIATE")
    commit = try database.prepare("COMMIT")
    latestVersion = try database.prepare("SELECT max(version) FROM \(table) WHERE key = ?")
    insert = try database.prepare(
      "INSERT INTO \(table)(key, version, written_at, payload) VALUES (?, ?, ?, ?)")
  }

  /// The encoder settings of the library's codec.
  static func makeEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }

  /// Encodes `value` and commits it as the next version of `key`; returns that version.
  @discardableResult
  func set<Value: Encodable>(_ value: Value, key: String) throws -> Int64 {
    try set(payload: encoder.encode(value), key: key)
  }

  /// Encodes and commits several values, each as the next version of its key, in ONE transaction: the
  /// physical limit of batching (one sync for all of them).
  func set<Value: Encodable>(batch: [(key: String, value: Value)]) throws {
    try begin.run()
    do {
      for (key, value) in batch {
        try insertNext(payload: encoder.encode(value), key: key)
      }
      try commit.run()
    } catch {
      latestVersion.reset()
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// Commits an already encoded JSON `payload` as the next version of `key`: the cost of the write
  /// without the encoding. Returns that version.
  @discardableResult
  func set(payload: Data, key: String) throws -> Int64 {
    try begin.run()
    do {
      let version = try insertNext(payload: payload, key: key)
      try commit.run()
      return version
    } catch {
      latestVersion.reset()
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// `SELECT max(version)` + `INSERT` of the next version, inside the caller's transaction.
  @discardableResult
  private func insertNext(payload: Data, key: String) throws -> Int64 {
    try latestVersion.bind(key, at: 1)
    let latest = try latestVersion.step() && !latestVersion.isNull(0) ? latestVersion.int64(0) : 0
    latestVersion.reset()
    try insert.bind(key, at: 1)
    try insert.bind(latest + 1, at: 2)
    try insert.bind(Int64(Date().timeIntervalSince1970 * 1_000), at: 3)
    try insert.bind(utf8: payload, at: 4)
    try insert.run()
    return latest + 1
  }
}

/// Raw SQLite reading a store file: what the library's restore is compared with.
enum RawRestore {
  /// Reads the latest row of every key of an open store file with one query and decodes it.
  static func latestValues<Value: Decodable>(
    _ type: Value.Type, in database: RawDatabase
  ) throws -> [String: Value] {
    // SQLite returns the payload of the row holding max(version) for a bare column next to max().
    let latest = try database.prepare(
      "SELECT key, max(version), payload FROM pld_values GROUP BY key")
    let decoder = JSONDecoder()
    var values: [String: Value] = [:]
    while try latest.step() {
      values[latest.text(0)] = try decoder.decode(type, from: latest.data(2))
    }
    return values
  }

  /// Reads the latest row of each of `keys` by the primary key `(key, version)` — one prepared
  /// statement, one lookup per key — and decodes it; a key without rows is left out.
  static func latestValues<Value: Decodable>(
    _ type: Value.Type, keys: [String], in database: RawDatabase
  ) throws -> [String: Value] {
    let latest = try database.prepare(
      "SELECT payload FROM pld_values WHERE key = ? ORDER BY version DESC LIMIT 1")
    let decoder = JSONDecoder()
    var values: [String: Value] = [:]
    for key in keys {
      try latest.bind(key, at: 1)
      if try latest.step() { values[key] = try decoder.decode(type, from: latest.data(0)) }
      latest.reset()
    }
    return values
  }

  /// Appends `count` versions of `key` to the store file at `path` in one transaction, straight into
  /// `pld_values`, as fast as SQLite can: the history benchmark's prefill. Returns the latest version.
  static func appendHistory(path: String, key: String, count: Int, payload: Data) throws -> Int64 {
    let database = try RawDatabase(path: path)
    try database.execute("PRAGMA synchronous=OFF; BEGIN IMMEDIATE")
    let latest = try database.prepare("SELECT coalesce(max(version), 0) FROM pld_values WHERE key = ?")
    try latest.bind(key, at: 1)
    let start = try latest.step() ? latest.int64(0) : 0
    latest.reset()
    let insert = try database.prepare(
      "INSERT INTO pld_values(key, version, written_at, payload) VALUES (?, ?, ?, ?)")
    try insert.bind(key, at: 1)
    try insert.bind(utf8: payload, at: 4)
    let writtenAt = Int64(Date().timeIntervalSince1970 * 1_000)
    for offset in 1...Int64(count) {
      try insert.bind(start + offset, at: 2)
      try insert.bind(writtenAt, at: 3)
      try insert.run()
    }
    try database.execute("COMMIT; PRAGMA wal_checkpoint(TRUNCATE)")
    return start + Int64(count)
  }
}
