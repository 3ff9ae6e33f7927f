import PersistentLiveDataBackend
import PostgresNIO

/// A statement built in pieces: SQL text with `$n` placeholders, and the values bound to them.
///
/// ```swift
/// var sql = SharedSQL()
/// sql.append("SELECT key FROM pld_heads WHERE key_hash = \(sql.bind(hash))")
/// let rows = try await client.query(sql.query)
/// ```
struct SharedSQL {
  private(set) var text = ""
  private var binds = PostgresBindings()
  private var count = 0

  /// Binds `value` and returns its placeholder.
  mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
    binds.append(value)
    count += 1
    return "$\(count)"
  }

  /// Binds an optional `value` (NULL when nil) and returns its placeholder.
  mutating func bind(_ value: String?) -> String {
    if let value { return bind(value) }
    binds.appendNull()
    count += 1
    return "$\(count)"
  }

  mutating func append(_ sql: String) {
    text += sql
  }

  var query: PostgresQuery { PostgresQuery(unsafeSQL: text, binds: binds) }
}

/// The SQL of collections, prefixes of keys and removals.
///
/// **A prefix of keys.** Keys may be 1 MiB, and a B-tree entry cannot be larger than about 2.7 KB, so
/// `pld_heads` cannot have an index on `key` itself. The index `pld_heads_key_prefix` is on the key's
/// first ``indexedCharacters`` characters, compared by bytes (`COLLATE "C"`): at most 1 KiB of UTF-8,
/// which always fits. A prefix `P` selects the index range of `left(P, 256)` — every key that starts with
/// `P` has a first 256 characters that start with `left(P, 256)` — and `starts_with(key, P)` then keeps
/// exactly the keys that start with `P`, however long `P` and the keys are. The index is built
/// concurrently by ``SharedSchema/buildConcurrentIndexes(client:logger:)``; until it exists, the same
/// statements scan the table and give the same results.
///
/// ```swift
/// let members = SharedStatements.members(prefix: "todo/")
/// ```
extension SharedStatements {
  /// The characters of a key the prefix index holds.
  static let indexedCharacters = 256

  /// Milliseconds since 1970 of a `timestamptz` column.
  static func milliseconds(of column: String) -> String {
    "(extract(epoch FROM \(column)) * 1000)::bigint"
  }

  /// The first ``indexedCharacters`` characters of `text`, as PostgreSQL's `left` counts them.
  private static func indexed(_ text: String) -> String {
    var scalars = String.UnicodeScalarView()
    scalars.append(contentsOf: text.unicodeScalars.prefix(indexedCharacters))
    return String(scalars)
  }

  /// `column`'s first characters, compared by bytes: the prefix index's expression.
  private static func left(_ column: String) -> String {
    "left(\(column), \(indexedCharacters)) COLLATE \"C\""
  }

  /// ` AND` the condition "`column` starts with `prefix`", in a form the prefix index serves; nothing for
  /// an empty prefix (every key).
  static func startsWith(_ prefix: String, column: String = "h.key", in sql: inout SharedSQL) -> String {
    guard !prefix.isEmpty else { return "" }
    let lower = indexed(prefix)
    var condition = " AND \(left(column)) >= \(sql.bind(lower))"
    if let upper = MemberKey.upperBound(of: lower) {
      condition += " AND \(left(column)) < \(sql.bind(upper))"
    }
    return condition + " AND starts_with(\(column), \(sql.bind(prefix)))"
  }

  /// The latest row of every live key that starts with `prefix`, and the horizon of the statement's
  /// snapshot (one row with nulls when there is none): what a collection opens from. Columns: horizon,
  /// key, version, payload, schema version, milliseconds, author, reason.
  static func members(prefix: String) -> PostgresQuery {
    var sql = SharedSQL()
    let condition = startsWith(prefix, in: &sql)
    sql.append(
      """
      SELECT s.horizon, m.key, m.version, m.payload, m.schema_version, m.ms, m.author, m.reason
      FROM (SELECT \(horizon) AS horizon) s LEFT JOIN (
        SELECT h.key, v.version, v.payload, v.schema_version, \(milliseconds(of: "v.written_at")) AS ms,
          v.author, v.reason
        FROM pld_heads h JOIN pld_values v ON v.key_hash = h.key_hash AND v.version = h.version
        WHERE true\(condition)
      ) m ON true
      """)
    return sql.query
  }

  /// The live keys (not removed) that start with `prefix`, in byte order.
  static func keys(prefix: String) -> PostgresQuery {
    var sql = SharedSQL()
    let condition = startsWith(prefix, in: &sql)
    sql.append(
      """
      SELECT h.key FROM pld_heads h
      WHERE EXISTS (SELECT 1 FROM pld_values v WHERE v.key_hash = h.key_hash AND v.version = h.version)\(condition)
      ORDER BY h.key COLLATE "C"
      """)
    return sql.query
  }

  /// The heads row of a key and the value row at its version, read in one snapshot: the key's newest
  /// row (a value row), the version its removal took (no value row), or nothing (no heads row).
  /// Columns: heads version, version, payload, schema version, milliseconds, author, reason.
  static func state(keyHash: String) -> PostgresQuery {
    """
    SELECT h.version, v.version, v.payload, v.schema_version, \(unescaped: milliseconds(of: "v.written_at")),
      v.author, v.reason
    FROM pld_heads h LEFT JOIN pld_values v ON v.key_hash = h.key_hash AND v.version = h.version
    WHERE h.key_hash = \(keyHash)
    """
  }

  /// Locks the heads row of a key until the transaction ends.
  static func lockHead(keyHash: String) -> PostgresQuery {
    "SELECT version FROM pld_heads WHERE key_hash = \(keyHash) FOR UPDATE"
  }

  /// Removes a key whose heads row the transaction locked, if its newest version has a value row: the
  /// heads row takes the next version, every value row goes, and the removal is recorded. Returns the
  /// version and `removed_at` in milliseconds; no row when the key was already removed.
  ///
  /// The heads row must be locked by an earlier statement of the transaction: this statement's snapshot
  /// then sees the value row of every write that held the lock before.
  static func remove(keyHash: String, attribution: WriteAttribution?) -> PostgresQuery {
    """
    WITH head AS (
      UPDATE pld_heads h SET version = h.version + 1
      WHERE h.key_hash = \(keyHash)
        AND EXISTS (SELECT 1 FROM pld_values v WHERE v.key_hash = h.key_hash AND v.version = h.version)
      RETURNING h.version
    ), deleted AS (
      DELETE FROM pld_values WHERE key_hash = \(keyHash) AND version < (SELECT version FROM head)
    ), recorded AS (
      INSERT INTO pld_removals (key_hash, version, author, reason)
      SELECT \(keyHash), version, \(attribution?.author), \(attribution?.reason) FROM head
      RETURNING version, removed_at
    )
    SELECT version, \(unescaped: milliseconds(of: "removed_at")) FROM recorded
    """
  }

  /// The current snapshot, as text (`xmin:xmax:xip,…`).
  static let snapshot: PostgresQuery = "SELECT pg_current_snapshot()::text"

  /// "A row of the transaction in `column` is visible in the snapshot bound as `snapshot`": rows written
  /// before the change feed (schema version 2) have no transaction id and are visible in every snapshot.
  private static func visible(_ column: String, in snapshot: String) -> String {
    "(\(column) IS NULL OR pg_visible_in_snapshot(\(column)::text::xid8, \(snapshot)::text::pg_snapshot))"
  }

  /// At most `limit` members that start with `prefix`, above the key `after`, in byte order, each with
  /// its newest row visible in `snapshot`: a collection's members as they were then (a member removed
  /// since has no row left and is not listed). Columns: key, version, payload, schema version,
  /// milliseconds, author, reason.
  static func members(prefix: String, asOf snapshot: String, after: String, limit: Int) -> PostgresQuery {
    var sql = SharedSQL()
    let condition = startsWith(prefix, in: &sql)
    let snapshotBind = sql.bind(snapshot)
    sql.append(
      """
      SELECT h.key, v.version, v.payload, v.schema_version, \(milliseconds(of: "v.written_at")), v.author,
        v.reason
      FROM pld_heads h CROSS JOIN LATERAL (
        SELECT version, payload, schema_version, written_at, author, reason FROM pld_values
        WHERE key_hash = h.key_hash AND \(visible("changed_by", in: snapshotBind))
        ORDER BY version DESC LIMIT 1
      ) v
      WHERE \(left("h.key")) >= \(sql.bind(indexed(after))) AND h.key COLLATE "C" > \(sql.bind(after))\(condition)
      ORDER BY h.key COLLATE "C" LIMIT \(sql.bind(Int64(limit)))
      """)
    return sql.query
  }

  /// A position in a delta: the key, version and kind (a write sorts before the removal of its version)
  /// of the last change delivered.
  struct DeltaPosition: Sendable, Equatable {
    let key: String
    let version: Int64
    let removed: Bool
  }

  /// At most `limit` changes — written rows and removals — of the keys that start with `prefix`,
  /// committed after the snapshot `since` and visible in the snapshot `through` (both as text), after
  /// `position`, in the order (key by bytes, version, a write before a removal). Columns: key, version,
  /// removed, payload, schema version, milliseconds, author, reason.
  static func delta(
    prefix: String, since: String, through: String, after position: DeltaPosition?, limit: Int
  ) -> PostgresQuery {
    var sql = SharedSQL()
    let sinceBind = sql.bind(since)
    let throughBind = sql.bind(through)
    let window = { (column: String) -> String in
      """
      \(column) >= pg_snapshot_xmin(\(sinceBind)::text::pg_snapshot)::text::bigint
          AND NOT pg_visible_in_snapshot(\(column)::text::xid8, \(sinceBind)::text::pg_snapshot)
          AND pg_visible_in_snapshot(\(column)::text::xid8, \(throughBind)::text::pg_snapshot)
      """
    }
    let written = startsWith(prefix, in: &sql)
    let removed = startsWith(prefix, in: &sql)
    var after = ""
    if let position {
      let key = sql.bind(position.key)
      let version = sql.bind(position.version)
      after = """
        WHERE c.key COLLATE "C" > \(key) OR (c.key = \(key) AND (c.version > \(version)
          OR (c.version = \(version) AND c.removed > \(sql.bind(position.removed)))))
        """
    }
    sql.append(
      """
      SELECT c.key, c.version, c.removed, c.payload, c.schema_version, c.ms, c.author, c.reason FROM (
        SELECT h.key, v.version, false AS removed, v.payload, v.schema_version,
          \(milliseconds(of: "v.written_at")) AS ms, v.author, v.reason
        FROM pld_values v JOIN pld_heads h ON h.key_hash = v.key_hash
        WHERE \(window("v.changed_by"))\(written)
        UNION ALL
        SELECT h.key, r.version, true, NULL, NULL, \(milliseconds(of: "r.removed_at")), r.author, r.reason
        FROM pld_removals r JOIN pld_heads h ON h.key_hash = r.key_hash
        WHERE \(window("r.changed_by"))\(removed)
      ) c \(after)
      ORDER BY c.key COLLATE "C", c.version, c.removed LIMIT \(sql.bind(Int64(limit)))
      """)
    return sql.query
  }
}
