/// The read-only statements of ``StoreInspector``, in one place next to the schema they assume
/// (`Migrations/`).
///
/// An inspector never migrates: a file of schema 1 has no `schema_version` column, and every row of it is of
/// value schema 1. Statements that read it take the column's expression,
/// ``schemaVersionColumn(fileSchema:)``.
enum InspectionSQL {
  /// `schema_version`, or the constant `1` for a file older than migration 2.
  static func schemaVersionColumn(fileSchema: Int) -> String {
    fileSchema >= 2 ? "schema_version" : "1"
  }

  /// What the row statements read after the payload: the schema version's expression, then the author and
  /// the reason (`NULL, NULL` for a file older than migration 7).
  static func rowColumns(fileSchema: Int) -> String {
    schemaVersionColumn(fileSchema: fileSchema) + (fileSchema >= 7 ? ", author, reason" : ", NULL, NULL")
  }

  /// Every key, in byte order: a skip-scan over the primary key, O(keys × log rows).
  static let keys = SQL.keys

  /// Every key with its newest version, in byte order, without reading history rows.
  static let latestVersions =
    SQL.distinctKeys + """
      SELECT key, (SELECT max(version) FROM pld_values WHERE key = k.key) FROM k WHERE key IS NOT NULL
      """

  /// Per key: newest version, oldest version, versions kept, bytes of all payloads, and the newest
  /// row's time, payload size and schema version. `length(CAST(… AS BLOB))` counts bytes, not characters.
  static func keyStatistics(schema: String) -> String { keyStatistics(filter: "", schema: schema) }

  /// ``keyStatistics(schema:)`` of the one key bound to `?1`.
  static func keyStatisticsOfKey(schema: String) -> String {
    keyStatistics(filter: "WHERE key = ?1", schema: schema)
  }

  private static func keyStatistics(filter: String, schema: String) -> String {
    """
    SELECT g.key, g.latest, g.oldest, g.kept, g.total, v.written_at, length(CAST(v.payload AS BLOB)),
           \(schema == "1" ? "1" : "v.\(schema)")
    FROM (
      SELECT key, max(version) AS latest, min(version) AS oldest, count(*) AS kept,
             sum(length(CAST(payload AS BLOB))) AS total
      FROM pld_values \(filter) GROUP BY key
    ) AS g
    JOIN pld_values AS v ON v.key = g.key AND v.version = g.latest
    ORDER BY g.key
    """
  }

  /// The range of versions of one key: newest, oldest.
  static let versionRange = "SELECT max(version), min(version) FROM pld_values WHERE key = ?"

  /// Rows of one key, newest first, at most `?2` (-1: all); `columns` is ``rowColumns(fileSchema:)``.
  static func rowsNewestFirst(columns: String) -> String {
    """
    SELECT version, written_at, payload, \(columns) FROM pld_values WHERE key = ? ORDER BY version DESC LIMIT ?
    """
  }

  /// One row.
  static func row(columns: String) -> String {
    "SELECT version, written_at, payload, \(columns) FROM pld_values WHERE key = ? AND version = ?"
  }

  /// Rows of one key newer than a version, oldest first.
  static func rowsAfter(columns: String) -> String {
    """
    SELECT version, written_at, payload, \(columns) FROM pld_values WHERE key = ? AND version > ?
    ORDER BY version
    """
  }

  /// Every row, by key then version (the other way round when `descending`).
  static func allRows(columns: String, descending: Bool = false) -> String {
    let order = descending ? " DESC" : ""
    return """
      SELECT key, version, written_at, payload, \(columns) FROM pld_values ORDER BY key\(order), version\(order)
      """
  }

  /// Every row of key `?1`, by version (newest first when `descending`).
  static func allRowsOfKey(columns: String, descending: Bool = false) -> String {
    """
    SELECT key, version, written_at, payload, \(columns) FROM pld_values WHERE key = ?1
    ORDER BY version\(descending ? " DESC" : "")
    """
  }

  /// The number of rows.
  static let rowCount = "SELECT count(*) FROM pld_values"

  /// The number of rows of key `?1`.
  static let rowCountOfKey = "SELECT count(*) FROM pld_values WHERE key = ?1"

  /// Every row's key, version, whether its payload is well-formed JSON, and its schema version, by key
  /// then version; and the payload when it is long enough to nest deeper than ``JSONDepth/limit`` (two
  /// brackets a level), NULL otherwise.
  static func payloadValidity(schema: String) -> String {
    """
    SELECT key, version, json_valid(payload), \(schema),
           CASE WHEN length(CAST(payload AS BLOB)) > \(2 * JSONDepth.limit + 1) THEN payload END
    FROM pld_values ORDER BY key, version
    """
  }
}
