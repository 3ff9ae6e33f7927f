import Foundation
import PersistentLiveDataBackend

extension SharedSchema {
  /// One statement — a `DO` block — that applies the `pending` migrations in order and records each in
  /// `pld_schema`: the migrations' transaction then takes one round trip, so the locks its `ALTER TABLE`s
  /// take (on `pld_values` among them) are held for the server's own milliseconds, however slow the
  /// replica or the network. Sent one statement at a time, the same migrations held `pld_values` for as
  /// many round trips (over 100 ms for 0002–0006 on a loaded two-core machine).
  ///
  /// A statement that fails is raised again as `pld-migration VERSION: MESSAGE` with its SQLSTATE
  /// (``migrationFailure(_:)`` reads it back); the transaction rolls back whole.
  ///
  /// ```swift
  /// try await connection.query(PostgresQuery(unsafeSQL: SharedSchema.applyingStatement(pending)), logger: quiet)
  /// ```
  static func applyingStatement(_ pending: [(version: Int, name: String, sql: String)]) -> String {
    var body = "DECLARE pld_version integer := 0;\nBEGIN\n"
    for migration in pending {
      body += "pld_version := \(migration.version);\n"
      let record =
        migration.version >= 5
        ? "INSERT INTO pld_schema (version, name, compatibility) VALUES (\(migration.version), "
          + "'\(migration.name)', '\(compatibility(of: migration.version).rawValue)')"
        : "INSERT INTO pld_schema (version, name) VALUES (\(migration.version), '\(migration.name)')"
      // Each one run by EXECUTE, planned when it runs: after the statements before it changed the tables.
      for statement in transactionalStatements(of: migration) + [record] {
        body += "EXECUTE \(statementQuote)\(statement)\(statementQuote);\n"
      }
    }
    body += """
      EXCEPTION WHEN OTHERS THEN
        RAISE EXCEPTION 'pld-migration %: %', pld_version, SQLERRM USING ERRCODE = SQLSTATE;
      END
      """
    return "DO \(blockQuote)\n\(body)\n\(blockQuote)"
  }

  /// The dollar quotes of the block and of each statement in it (no migration holds a `$`: a test says so).
  static let blockQuote = "$pld_migrations$"
  static let statementQuote = "$pld_statement$"

  /// The migration and the server's words of a failure raised by ``applyingStatement(_:)``'s block.
  static func migrationFailure(_ message: String) -> (version: Int, reason: String)? {
    guard let range = message.range(of: "pld-migration ") else { return nil }
    let rest = message[range.upperBound...]
    guard let colon = rest.firstIndex(of: ":"), let version = Int(rest[..<colon]) else { return nil }
    return (version, String(rest[rest.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
  }
}
