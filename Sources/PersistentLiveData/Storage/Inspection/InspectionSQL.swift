/// The read-only statements of ``StoreInspector``, in one place next to the schema they assume
/// (`Migrations/0001_initial_schema.sql`).
enum InspectionSQL {
  /// Every key, in byte order: a skip-scan over the primary key, O(keys × log rows).
  static let keys = SQL.keys

  /// Every key with its newest version, in byte order, without reading history rows.
  static let latestVersions =
    SQL.distinctKeys + """
      SELECT key, (SELECT max(version) FROM pld_values WHERE key = k.key) FROM k WHERE key IS NOT NULL
      """

  /// Per key: newest version, oldest version, versions kept, bytes of all payloads, and the newest
  /// row's time and payload size. `length(CAST(… AS BLOB))` counts bytes, not characters.
  static let keyStatistics = keyStatistics(filter: "")

  /// ``keyStatistics`` of the one key bound to `?1`.
  static let keyStatisticsOfKey = keyStatistics(filter: "WHERE key = ?1")

  private static func keyStatistics(filter: String) -> String {
    """
    SELECT g.key, g.latest, g.oldest, g.kept, g.total, v.written_at, length(CAST(v.payload AS BLOB))
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

  /// Rows of one key, newest first, at most `?2` (-1: all).
  static let rowsNewestFirst = """
    SELECT version, written_at, payload FROM pld_values WHERE key = ? ORDER BY version DESC LIMIT ?
    """

  /// One row.
  static let row = "SELECT version, written_at, payload FROM pld_values WHERE key = ? AND version = ?"

  /// Rows of one key newer than a version, oldest first.
  static let rowsAfter = """
    SELECT version, written_at, payload FROM pld_values WHERE key = ? AND version > ? ORDER BY version
    """

  /// Every row, by key then version.
  static let allRows = "SELECT key, version, written_at, payload FROM pld_values ORDER BY key, version"

  /// Every row of key `?1`, by version.
  static let allRowsOfKey = """
    SELECT key, version, written_at, payload FROM pld_values WHERE key = ?1 ORDER BY version
    """

  /// The number of rows.
  static let rowCount = "SELECT count(*) FROM pld_values"

  /// The number of rows of key `?1`.
  static let rowCountOfKey = "SELECT count(*) FROM pld_values WHERE key = ?1"

  /// Every row's key, version and whether its payload is well-formed JSON, by key then version.
  static let payloadValidity = """
    SELECT key, version, json_valid(payload) FROM pld_values ORDER BY key, version
    """
}
