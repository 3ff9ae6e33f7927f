import PersistentLiveData
import PostgresNIO

/// The SQL of a shared store, in one place.
///
/// A write is a single statement whose parts run as one transaction: the heads row of the key gets the
/// next version (writers of a key queue on that row, so versions are gap-free and commit in order), the
/// value row is inserted with it (its `changed_by` default records the writing transaction, for the
/// catch-up), and retention deletes what falls out of the kept window. It sends no notification:
/// ``SharedNotifier`` does, after the commit, in a statement of its own.
///
/// ```swift
/// let rows = try await client.query(SharedStatements.write(write, retention: .last(10)))
/// ```
enum SharedStatements {
  /// Milliseconds since 1970 of `written_at`.
  private static let milliseconds = "(extract(epoch FROM written_at) * 1000)::bigint"

  static func write(_ write: SharedWrite, retention: HistoryRetention) -> PostgresQuery {
    // $1 key hash, $2 key, $3 payload, $4 schema version, $5 author, $6 reason (NULL when none), $7
    // expected version or versions kept.
    var binds = PostgresBindings(capacity: 8)
    binds.append(write.keyHash)
    binds.append(write.key)
    binds.append(write.payload)
    binds.append(Int64(write.schemaVersion))
    binds.append(write.attribution?.author)
    binds.append(write.attribution?.reason)
    let head: String
    switch write.expectedVersion {
    case nil:
      head = """
        INSERT INTO pld_heads AS h (key_hash, key, version) VALUES ($1, $2, 1)
        ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
        """
    case 0?:
      head =
        "INSERT INTO pld_heads (key_hash, key, version) VALUES ($1, $2, 1) ON CONFLICT DO NOTHING RETURNING version"
    case let expected?:
      binds.append(expected)
      head =
        "UPDATE pld_heads SET version = version + 1 WHERE key_hash = $1 AND version = $7 RETURNING version"
    }
    var pruning = ""
    if case .last(let kept) = retention {
      binds.append(Int64(max(1, kept)))
      let placeholder = binds.count
      pruning = """
        , pruned AS (
          DELETE FROM pld_values WHERE key_hash = $1 AND version <= (SELECT version FROM inserted) - $\(placeholder)
        )
        """
    }
    let sql = """
      WITH head AS (
        \(head)
      ), inserted AS (
        INSERT INTO pld_values (key_hash, version, payload, schema_version, author, reason)
        SELECT $1, version, $3, $4, $5, $6 FROM head
        RETURNING version, written_at
      )\(pruning)
      SELECT inserted.version, (extract(epoch FROM inserted.written_at) * 1000)::bigint FROM inserted
      """
    return PostgresQuery(unsafeSQL: sql, binds: binds)
  }

  /// The xmin of the statement's snapshot: every transaction it does not see has an id at least this
  /// large (see ``SharedChangeFeed``).
  static let horizon = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"

  /// The horizon of this statement's snapshot, and the newest version of every key a transaction with an
  /// id of at least `since` wrote (none when nothing did: then one row with nulls).
  static func changed(since: Int64) -> PostgresQuery {
    """
    SELECT h.horizon, c.key_hash, c.version FROM (SELECT \(unescaped: horizon) AS horizon) h
    LEFT JOIN (
      SELECT key_hash, max(version) AS version FROM pld_values WHERE changed_by >= \(since) GROUP BY key_hash
    ) c ON true
    """
  }

  static func latest(keyHash: String) -> PostgresQuery {
    """
    SELECT version, payload, schema_version, \(unescaped: milliseconds), author, reason FROM pld_values
    WHERE key_hash = \(keyHash) ORDER BY version DESC LIMIT 1
    """
  }

  static func row(keyHash: String, version: Int64) -> PostgresQuery {
    """
    SELECT version, payload, schema_version, \(unescaped: milliseconds), author, reason FROM pld_values
    WHERE key_hash = \(keyHash) AND version = \(version)
    """
  }

  static func rows(keyHash: String, after version: Int64, limit: Int) -> PostgresQuery {
    """
    SELECT version, payload, schema_version, \(unescaped: milliseconds), author, reason FROM pld_values
    WHERE key_hash = \(keyHash) AND version > \(version) ORDER BY version LIMIT \(Int64(limit))
    """
  }

  static func history(keyHash: String, limit: Int?) -> PostgresQuery {
    """
    SELECT version, payload, schema_version, \(unescaped: milliseconds), author, reason FROM pld_values
    WHERE key_hash = \(keyHash) ORDER BY version DESC LIMIT \(limit.map { Int64(max(0, $0)) })
    """
  }
}
