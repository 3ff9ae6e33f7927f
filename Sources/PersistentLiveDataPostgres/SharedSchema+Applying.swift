import Foundation
import Logging
import PersistentLiveDataBackend
import PostgresNIO

extension SharedSchema {
  /// One statement — a `DO` block, sent outside any transaction, so that it is a transaction of its own
  /// that the server commits as the block ends — that takes the migrations' advisory lock, creates
  /// `pld_schema` when missing, reads the version the database is at and applies the `pending`
  /// migrations past it in order, recording each in `pld_schema`. The locks its `ALTER TABLE`s take (on
  /// `pld_values` among them) are held for the server's own milliseconds, however slow the replica or the
  /// network: no round trip to the client falls between the first lock and the commit. (Sent one statement
  /// at a time, the same migrations held `pld_values` for as many round trips, over 100 ms for 0002–0006 on
  /// a loaded two-core machine; sent as one block but committed by a `COMMIT` of their own, for one round
  /// trip, which a loaded machine stretched past 100 ms too.)
  ///
  /// The block's commit does not wait for its WAL to reach the disk (`synchronous_commit` off for this
  /// transaction alone), so the locks are not held across a flush either, which a busy disk stretches
  /// past 100 ms. Nothing of durability is given up: the WAL is written in order, so any durable write
  /// made after the migration — the first that uses what it added — flushes it too; and a migration lost
  /// with the server before that is applied again at the next start.
  ///
  /// Each migration is guarded by the version read under the lock, so a replica that waited for another's
  /// block finds nothing left to do. Whether `pld_schema` exists is read from `pg_class` with the
  /// statement's snapshot, taken after the lock: `to_regclass` reads the session's catalog cache, which
  /// taking an advisory lock does not refresh, and so missed a table another replica's block had just
  /// created. The versions applied are left in the session setting
  /// ``appliedSetting`` (a comma-separated list), for the replica's log.
  ///
  /// A statement that fails is raised again as `pld-migration VERSION: MESSAGE` with its SQLSTATE
  /// (``migrationFailure(_:)`` reads it back); the transaction rolls back whole.
  ///
  /// ```swift
  /// try await connection.query(PostgresQuery(unsafeSQL: SharedSchema.applyingStatement(pending)), logger: quiet)
  /// ```
  static func applyingStatement(_ pending: [(version: Int, name: String, sql: String)]) -> String {
    var body = """
      DECLARE pld_version integer := 0; pld_found integer := 0; pld_applied text := '';
      BEGIN
      PERFORM set_config('\(appliedSetting)', '', false);
      PERFORM set_config('synchronous_commit', 'off', true);
      PERFORM pg_advisory_xact_lock(\(lockKey));
      IF NOT EXISTS (
        SELECT FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = 'pld_schema' AND n.nspname = current_schema()) THEN
      EXECUTE \(statementQuote)\(schemaTable)\(statementQuote);
      END IF;
      EXECUTE 'SELECT coalesce(max(version), 0) FROM pld_schema' INTO pld_found;

      """
    for migration in pending {
      body += "IF pld_found < \(migration.version) THEN\npld_version := \(migration.version);\n"
      let record =
        migration.version >= 5
        ? "INSERT INTO pld_schema (version, name, compatibility) VALUES (\(migration.version), "
          + "'\(migration.name)', '\(compatibility(of: migration.version).rawValue)')"
        : "INSERT INTO pld_schema (version, name) VALUES (\(migration.version), '\(migration.name)')"
      // Each one run by EXECUTE, planned when it runs: after the statements before it changed the tables.
      for statement in transactionalStatements(of: migration) + [record] {
        body += "EXECUTE \(statementQuote)\(statement)\(statementQuote);\n"
      }
      body += "pld_applied := pld_applied || '\(migration.version),';\nEND IF;\n"
    }
    body += """
      PERFORM set_config('\(appliedSetting)', pld_applied, false);
      EXCEPTION WHEN OTHERS THEN
        RAISE EXCEPTION 'pld-migration %: %', pld_version, SQLERRM USING ERRCODE = SQLSTATE;
      END
      """
    return "DO \(blockQuote)\n\(body)\n\(blockQuote)"
  }

  /// `pld_schema` as the first release created it (later migrations add to it).
  static let schemaTable = """
    CREATE TABLE pld_schema (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
    """

  /// The session setting in which ``applyingStatement(_:)``'s block leaves the versions it applied.
  static let appliedSetting = "pld.applied_migrations"

  /// The dollar quotes of the block and of each statement in it (no migration holds a `$`: a test says so).
  static let blockQuote = "$pld_migrations$"
  static let statementQuote = "$pld_statement$"

  /// The migration and the server's SQLSTATE and words of a failure raised by ``applyingStatement(_:)``'s
  /// block, as ``SharedDatabase/describe(_:)`` gave them (version 0: before the first migration, taking the lock or creating `pld_schema`).
  static func migrationFailure(_ message: String) -> (version: Int, reason: String)? {
    guard let range = message.range(of: "pld-migration ") else { return nil }
    let rest = message[range.upperBound...]
    guard let colon = rest.firstIndex(of: ":"), let version = Int(rest[..<colon]) else { return nil }
    // What came before the block's words is the SQLSTATE `describe` puts first ("42501: "): kept.
    let code = message[..<range.lowerBound]
    return (version, code + String(rest[rest.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
  }

  /// The versions ``applyingStatement(_:)``'s block applied on `connection`, read from ``appliedSetting``.
  static func appliedVersions(on connection: PostgresConnection) async throws -> [Int] {
    var applied: [Int] = []
    for try await list in try await connection.query(
      "SELECT coalesce(current_setting(\(appliedSetting), true), '')", logger: quiet
    ).decode(String.self) {
      applied = list.split(separator: ",").compactMap { Int($0) }
    }
    return applied
  }
}
