import PersistentLiveDataBackend
import PostgresNIO

/// The SQL of a shared store, in one place.
///
/// A write is a single statement whose parts run as one transaction: the heads row of the key gets the
/// next version (writers of a key queue on that row, so versions are gap-free and commit in order), the
/// value row is inserted with it (its `changed_by` default records the writing transaction, for the
/// catch-up), and retention deletes what falls out of the kept window. It runs as a prepared statement
/// (``SharedWriteStatement``). Its notification goes inside it while this replica's writes come one at a
/// time; otherwise ``SharedNotifier`` sends it after the commit, in a statement of its own.
///
/// ```swift
/// let (head, pruning, binds) = SharedStatements.write(write, retention: .last(10))
/// let sql = SharedStatements.writeSQL(head: head, pruning: pruning)
/// ```
enum SharedStatements {
  /// Milliseconds since 1970 of `written_at`.
  private static let milliseconds = milliseconds(of: "written_at")

  /// How a write's heads row gets its version.
  enum Head: String, Sendable {
    /// The next version, whatever the latest is (`set`).
    case next
    /// Version 1, only if the key was never written (an optimistic write of a key at version 0).
    case first
    /// The next version, only if the latest is `$7` (an optimistic write).
    case after
  }

  /// The SQL of a write: `$1` key hash, `$2` key, `$3` payload, `$4` schema version, `$5` author, `$6`
  /// reason (NULL when none), then `$7` the expected version (``Head/after``) and the versions kept
  /// (`pruning`). It returns the version and its `written_at` in milliseconds.
  ///
  /// `notifying` adds the write's notification to the statement (``SharedNotifier/claimInline()``: while
  /// this replica's writes come one at a time), its payload made of the four binds after the others and
  /// the committed version and time (``SharedNotification/InlineParts``): one round trip fewer before
  /// another replica hears of it, and the notification commits with the write or not at all.
  static func writeSQL(head: Head, pruning: Bool, notifying: Bool = false) -> String {
    let first = 7 + (head == .after ? 1 : 0) + (pruning ? 1 : 0)
    let notified =
      notifying
      ? """
      , notified AS (
        SELECT pg_notify('\(SharedDatabase.channel)', $\(first) || inserted.version || $\(first + 1)
          || coalesce($\(first + 2) || \(milliseconds(of: "inserted.written_at")) || $\(first + 3), ''))
        FROM inserted
      )
      """ : ""
    let upsert: String
    switch head {
    case .next:
      upsert = """
        INSERT INTO pld_heads AS h (key_hash, key, version) VALUES ($1, $2, 1)
        ON CONFLICT (key_hash) DO UPDATE SET version = h.version + 1 RETURNING h.version
        """
    case .first:
      upsert =
        "INSERT INTO pld_heads (key_hash, key, version) VALUES ($1, $2, 1) ON CONFLICT DO NOTHING RETURNING version"
    case .after:
      upsert =
        "UPDATE pld_heads SET version = version + 1 WHERE key_hash = $1 AND version = $7 RETURNING version"
    }
    let kept = head == .after ? "$8" : "$7"
    let pruned =
      pruning
      ? """
      , pruned AS (
        DELETE FROM pld_values WHERE key_hash = $1 AND version <= (SELECT version FROM inserted) - \(kept)
      )
      """ : ""
    return """
      WITH head AS (
        \(upsert)
      ), inserted AS (
        INSERT INTO pld_values (key_hash, version, payload, schema_version, author, reason)
        SELECT $1, version, $3, $4, $5, $6 FROM head
        RETURNING version, written_at
      )\(pruned)\(notified)
      SELECT inserted.version, \(milliseconds(of: "inserted.written_at"))
      FROM inserted\(notifying ? ", notified" : "")
      """
  }

  /// The head and pruning of `write` under `retention`, and its binds in ``writeSQL(head:pruning:)``'s
  /// order.
  static func write(
    _ write: SharedWrite, retention: HistoryRetention
  ) -> (head: Head, pruning: Bool, binds: PostgresBindings) {
    var binds = PostgresBindings(capacity: 8)
    binds.append(write.keyHash)
    binds.append(write.key)
    binds.append(write.payload)
    binds.append(Int64(write.schemaVersion))
    binds.append(write.attribution?.author)
    binds.append(write.attribution?.reason)
    let head: Head
    switch write.expectedVersion {
    case nil: head = .next
    case 0?: head = .first
    case let expected?:
      head = .after
      binds.append(expected)
    }
    var pruning = false
    if case .last(let kept) = retention {
      binds.append(Int64(max(1, kept)))
      pruning = true
    }
    return (head, pruning, binds)
  }

  /// The xmin of the statement's snapshot: every transaction it does not see has an id at least this
  /// large (see ``SharedChangeFeed``).
  static let horizon = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"

  /// The horizon of this statement's snapshot, and the newest version of every key a transaction with an
  /// id of at least `since` wrote or removed, with the key (none when nothing did: then one row with
  /// nulls).
  static func changed(since: Int64) -> PostgresQuery {
    """
    SELECT h.horizon, c.key_hash, c.version, k.key FROM (SELECT \(unescaped: horizon) AS horizon) h
    LEFT JOIN (
      SELECT key_hash, max(version) AS version FROM (
        SELECT key_hash, version FROM pld_values WHERE changed_by >= \(since)
        UNION ALL
        SELECT key_hash, version FROM pld_removals WHERE changed_by >= \(since)
      ) u GROUP BY key_hash
    ) c ON true
    LEFT JOIN pld_heads k ON k.key_hash = c.key_hash
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
