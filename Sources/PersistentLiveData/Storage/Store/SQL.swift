/// The statements the store runs, in one place so that the schema they assume is easy to review.
///
/// They assume the newest schema (`Migrations/`): a store migrates its file before its first read. Rows
/// are read as (version, written_at, payload, schema_version).
enum SQL {
  static let latestRow = """
    SELECT version, written_at, payload, schema_version FROM pld_values
    WHERE key = ? ORDER BY version DESC LIMIT 1
    """
  static let latestVersion = "SELECT max(version) FROM pld_values WHERE key = ?"
  static let row =
    "SELECT version, written_at, payload, schema_version FROM pld_values WHERE key = ? AND version = ?"
  static let insert = """
    INSERT INTO pld_values (key, version, written_at, payload, schema_version) VALUES (?, ?, ?, ?, ?)
    """
  static let schemaVersion = "SELECT schema_version FROM pld_values WHERE key = ? AND version = ?"
  static let prune = "DELETE FROM pld_values WHERE key = ? AND version <= ?"
  static let history = """
    SELECT version, written_at, payload, schema_version FROM pld_values
    WHERE key = ? AND version > ? ORDER BY version DESC LIMIT ?
    """
  static let rowsAfter = """
    SELECT version, written_at, payload, schema_version FROM pld_values
    WHERE key = ? AND version > ? ORDER BY version LIMIT ?
    """
  /// A common table `k(key)` of every distinct key, by a skip-scan over the primary key: one seek per
  /// key, O(keys × log rows), whatever the length of the histories.
  static let distinctKeys = """
    WITH RECURSIVE k(key) AS (
      SELECT min(key) FROM pld_values
      UNION ALL
      SELECT (SELECT min(key) FROM pld_values WHERE key > k.key) FROM k WHERE k.key IS NOT NULL
    )

    """
  static let keys =
    distinctKeys + """
      SELECT key FROM k WHERE key IS NOT NULL
      """
  /// The latest row of every key by one pass over the table: O(rows), the fastest way for small files.
  /// (SQLite documents that with max(), the bare columns come from the row holding the maximum.)
  static let latestRowsByScan = """
    SELECT key, max(version), written_at, payload, schema_version FROM pld_values GROUP BY key
    """
  /// The latest row of every key by a skip-scan over the primary key: O(keys × log rows), so that long
  /// histories cost nothing at startup.
  static let latestRowsBySkipScan =
    distinctKeys + """
      SELECT v.key, v.version, v.written_at, v.payload, v.schema_version FROM k
      JOIN pld_values AS v ON v.key = k.key
        AND v.version = (SELECT max(version) FROM pld_values WHERE key = k.key)
      """
}
