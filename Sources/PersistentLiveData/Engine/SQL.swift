/// The statements the store runs, in one place so that the schema they assume is easy to review.
///
/// They assume the newest schema (`Migrations/`): a store migrates its file before its first read. Rows
/// are read as (version, written_at, payload, schema_version, author, reason).
enum SQL {
  static let latestRow = """
    SELECT version, written_at, payload, schema_version, author, reason FROM pld_values
    WHERE key = ? ORDER BY version DESC LIMIT 1
    """
  /// The newest version of a key: its newest row's, or the version its removal took (which stays below
  /// any row written after it), 0 for a key never written.
  /// (A damaged file's row below 1 stays the answer, so that the next write is refused by the CHECK.)
  /// With it, the key's recorded retention (``recordedRetention``), read in the same statement so that
  /// a write costs no extra step: NULL when none is recorded, 0 for every version, else the count kept.
  static let keyHead = SlottedSQL(
    """
    SELECT coalesce(max(v, r), v, r), k FROM (SELECT
      (SELECT max(version) FROM pld_values WHERE key = ?1) AS v,
      (SELECT version FROM pld_removed_keys WHERE key = ?1) AS r,
      (SELECT coalesce(keep, 0) FROM pld_key_retention WHERE key = ?1) AS k)
    """)
  static let recordedRetentions = "SELECT key, keep FROM pld_key_retention ORDER BY key"
  static let recordRetention = """
    INSERT INTO pld_key_retention (key, keep) VALUES (?, ?)
    ON CONFLICT (key) DO UPDATE SET keep = excluded.keep
    """
  static let removedVersion = "SELECT version FROM pld_removed_keys WHERE key = ?"
  static let deleteKey = "DELETE FROM pld_values WHERE key = ?"
  static let recordRemoval = """
    INSERT INTO pld_removed_keys (key, version, removed_at, author, reason) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET version = excluded.version, removed_at = excluded.removed_at,
      author = excluded.author, reason = excluded.reason
    """
  static let row =
    "SELECT version, written_at, payload, schema_version, author, reason FROM pld_values WHERE key = ? AND version = ?"
  static let insert = SlottedSQL(
    """
    INSERT INTO pld_values (key, version, written_at, payload, schema_version, author, reason)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    """)
  static let schemaVersion = SlottedSQL("SELECT schema_version FROM pld_values WHERE key = ? AND version = ?")
  static let prune = SlottedSQL("DELETE FROM pld_values WHERE key = ? AND version <= ?")
  static let history = """
    SELECT version, written_at, payload, schema_version, author, reason FROM pld_values
    WHERE key = ? AND version > ? ORDER BY version DESC LIMIT ?
    """
  static let rowsAfter = """
    SELECT version, written_at, payload, schema_version, author, reason FROM pld_values
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
}
