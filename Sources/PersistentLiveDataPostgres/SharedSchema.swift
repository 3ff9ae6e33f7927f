import Foundation
import Logging
import PostgresNIO

/// The shared tables' migrations (`Migrations/postgres/`), applied once even when replicas start
/// together.
///
/// Every replica runs ``apply(client:logger:)`` on start. One transaction takes a transaction-scoped
/// advisory lock, so a second replica waits for the first and then finds nothing left to do; a
/// migration that fails rolls back entirely. `pld_schema` records what was applied.
///
/// ```swift
/// try await SharedSchema.apply(client: client, logger: logger)
/// ```
enum SharedSchema {
  /// The schema version this library writes and reads.
  static var current: Int { migrations.count }

  /// Each migration's version, name and SQL, in order.
  static let migrations: [(version: Int, name: String, sql: String)] = [
    (1, "0001_shared_schema.sql", String(decoding: PackageResources._001_shared_schema_sql, as: UTF8.self)),
    (2, "0002_change_feed.sql", String(decoding: PackageResources._002_change_feed_sql, as: UTF8.self)),
    (
      3, "0003_write_attribution.sql",
      String(decoding: PackageResources._003_write_attribution_sql, as: UTF8.self)
    ),
  ]

  /// The advisory lock key migrations hold ("pld" in ASCII, then 1).
  static let lockKey: Int64 = 0x706C_6400_0000_0001

  static func apply(client: PostgresClient, logger: Logger?) async throws {
    try await client.withConnection { connection in
      try await connection.query("BEGIN", logger: quiet)
      do {
        try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: quiet)
        try await connection.query(
          """
          CREATE TABLE IF NOT EXISTS pld_schema (
            version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
          """, logger: quiet)
        var found = 0
        for try await version in try await connection.query(
          "SELECT coalesce(max(version), 0)::bigint FROM pld_schema", logger: quiet
        ).decode(Int64.self) {
          found = Int(version)
        }
        if found > current { throw SharedStoreError.schemaTooNew(found: found, supported: current) }
        for migration in migrations where migration.version > found {
          do {
            for statement in statements(in: migration.sql) {
              try await connection.query(PostgresQuery(unsafeSQL: statement), logger: quiet)
            }
          } catch {
            throw SharedStoreError.migrationFailed(
              version: migration.version, reason: SharedDatabase.describe(error))
          }
          try await connection.query(
            "INSERT INTO pld_schema (version, name) VALUES (\(migration.version), \(migration.name))",
            logger: quiet)
          logger?.info("Applied shared-store schema", metadata: ["version": "\(migration.version)"])
        }
        try await connection.query("COMMIT", logger: quiet)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: quiet)
        throw error
      }
    }
  }

  /// The statements of a migration file: separated by a semicolon at the end of a line, comments left out.
  static func statements(in sql: String) -> [String] {
    let lines = sql.split(separator: "\n", omittingEmptySubsequences: false)
      .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
    var statements: [String] = []
    var current = ""
    for line in lines {
      current += line + "\n"
      if line.trimmingCharacters(in: .whitespaces).hasSuffix(";") {
        statements.append(current.trimmingCharacters(in: .whitespacesAndNewlines).dropLast() + "")
        current = ""
      }
    }
    let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
    if !rest.isEmpty { statements.append(rest) }
    return statements
  }

  static let quiet = Logger(
    label: "PersistentLiveDataPostgres.quiet", factory: { _ in SwiftLogNoOpLogHandler() })
}
