import Foundation
import Logging
import PostgresNIO

/// The shared tables' migrations (`Migrations/postgres/`), applied once even when replicas start
/// together.
///
/// Every replica runs ``apply(client:logger:)`` on start. When the database is behind, one statement —
/// its own transaction — takes a transaction-scoped advisory lock, so a second replica waits for the
/// first and then finds nothing left to do; a migration that fails rolls back entirely. `pld_schema`
/// records what was applied.
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
    (4, "0004_collections.sql", String(decoding: PackageResources._004_collections_sql, as: UTF8.self)),
    (
      5, "0005_migration_compatibility.sql",
      String(decoding: PackageResources._005_migration_compatibility_sql, as: UTF8.self)
    ),
    (6, "0006_replicas.sql", String(decoding: PackageResources._006_replicas_sql, as: UTF8.self)),
  ]

  /// What a replica that does not know each migration may do with the database (the README's compatibility
  /// promise), for those not ``MigrationCompatibility/readWrite``; recorded in `pld_schema` when applied
  /// (0001–0004 by 0005). A new migration that is not read-write is added here with its file.
  static let marks: [Int: MigrationCompatibility] = [
    // The initial schema: there is nothing before it.
    1: .incompatible
  ]

  /// The mark of migration `version`.
  static func compatibility(of version: Int) -> MigrationCompatibility { marks[version] ?? .readWrite }

  /// How this replica may use the database after ``apply(client:logger:)``.
  enum Access: Sendable, Equatable {
    case readWrite
    /// A newer release applied this migration (its recorded name), marked read-only for this one.
    case readOnly(migration: String)
  }

  /// An index built outside the migrations' transaction, with `CREATE INDEX CONCURRENTLY`: writers go on
  /// while it is built. Queries that it serves give the same results without it.
  struct ConcurrentIndex: Sendable {
    /// From this schema version on.
    let version: Int
    let name: String
    /// What follows `ON`.
    let definition: String
  }

  /// The indexes ``buildConcurrentIndexes(client:logger:)`` builds.
  static let concurrentIndexes = [
    // The change feed's (periodic catch-up: rows whose changed_by is at least a snapshot's xmin).
    // Migration 0002 creates it in its transaction, where a large pld_values held every writer for the
    // whole build; that statement is skipped (``transactionalStatements(of:)``) and the index built here.
    // A database migrated by a release that ran it has it valid already: nothing is built again.
    ConcurrentIndex(version: 2, name: "pld_values_changed_by", definition: "pld_values (changed_by)"),
    // A collection's members, keys(prefix:): the keys' first characters, by bytes (see
    // SharedStatements.startsWith). At most 1 KiB of UTF-8, so any key fits an entry.
    ConcurrentIndex(
      version: 4, name: "pld_heads_key_prefix",
      definition: "pld_heads ((left(key, \(SharedStatements.indexedCharacters)) COLLATE \"C\"))"),
  ]

  /// The advisory lock one replica holds while it builds the concurrent indexes ("pld" in ASCII, then 2).
  static let indexLockKey: Int64 = 0x706C_6400_0000_0002

  /// Builds every concurrent index that is missing, and builds again one that an interrupted build left
  /// invalid; returns the names of those it built. One replica at a time builds (the others find the
  /// lock taken and leave it to that one). Idempotent: ``PostgresStore/run()`` calls it at every start,
  /// so a build that a stopped replica or a restarted server interrupted is finished by the next run.
  ///
  /// The connection is closed afterwards rather than returned to the pool: it held a session lock, and
  /// a cancelled build must not leave it held.
  @discardableResult
  static func buildConcurrentIndexes(client: PostgresClient, logger: Logger?) async throws -> [String] {
    try await client.withConnection { connection in
      do {
        let built = try await buildConcurrentIndexes(on: connection, logger: logger)
        await SharedListener.closeBeforeRelease(connection)
        return built
      } catch {
        await SharedListener.closeBeforeRelease(connection)
        throw error
      }
    }
  }

  /// The body of ``buildConcurrentIndexes(client:logger:)``, on a connection that is closed afterwards.
  private static func buildConcurrentIndexes(
    on connection: PostgresConnection, logger: Logger?
  ) async throws -> [String] {
    var locked = false
    for try await acquired in try await connection.query(
      "SELECT pg_try_advisory_lock(\(indexLockKey))", logger: quiet
    ).decode(Bool.self) {
      locked = acquired
    }
    guard locked else { return [] }
    var built: [String] = []
    for index in concurrentIndexes {
      var valid: Bool?
      for try await state in try await connection.query(
        """
        SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = \(index.name) AND c.relnamespace = current_schema()::regnamespace
        """, logger: quiet
      ).decode(Bool.self) {
        valid = state
      }
      if valid == true { continue }
      if valid == false {
        // Left invalid by a build that was interrupted: it is dropped and built again.
        try await connection.query(
          PostgresQuery(unsafeSQL: "DROP INDEX CONCURRENTLY IF EXISTS \(index.name)"), logger: quiet)
      }
      try await connection.query(
        PostgresQuery(
          unsafeSQL: "CREATE INDEX CONCURRENTLY IF NOT EXISTS \(index.name) ON \(index.definition)"),
        logger: quiet)
      logger?.info("Built shared-store index", metadata: ["index": "\(index.name)"])
      built.append(index.name)
    }
    try await connection.query("SELECT pg_advisory_unlock(\(indexLockKey))", logger: quiet)
    return built
  }

  /// The advisory lock key migrations hold ("pld" in ASCII, then 1).
  static let lockKey: Int64 = 0x706C_6400_0000_0001

  /// Applies what is missing; returns how this replica may use the database: read-write, or read-only
  /// when a newer release applied a migration marked so for this one.
  ///
  /// - Throws: ``SharedStoreError/schemaTooNew(found:supported:)`` when a migration this replica does not
  ///   know is marked incompatible (or the database records no marks), or a migration's failure.
  @discardableResult
  static func apply(client: PostgresClient, logger: Logger?) async throws -> Access {
    try await client.withConnection { connection -> Access in
      // Read first, without a lock: a database already at this release's schema (every start but the
      // first after an upgrade) is neither locked nor sent the migrations.
      var found = try await version(on: connection)
      if found < current {
        let pending = migrations.filter { $0.version > found }
        do {
          try await connection.query(PostgresQuery(unsafeSQL: applyingStatement(pending)), logger: quiet)
        } catch {
          let described = SharedDatabase.describe(error)
          var failure = migrationFailure(described) ?? (pending[0].version, described)
          if failure.version == 0 { failure.version = pending[0].version }
          throw SharedStoreError.migrationFailed(version: failure.version, reason: failure.reason)
        }
        for version in try await appliedVersions(on: connection) {
          logger?.info("Applied shared-store schema", metadata: ["version": "\(version)"])
        }
        found = try await version(on: connection)
      }
      return found > current ? try await newerAccess(on: connection, found: found) : .readWrite
    }
  }

  /// The newest migration `pld_schema` records, 0 when there is no `pld_schema`.
  private static func version(on connection: PostgresConnection) async throws -> Int {
    var exists = false
    for try await found in try await connection.query(
      "SELECT to_regclass('pld_schema') IS NOT NULL", logger: quiet
    ).decode(Bool.self) {
      exists = found
    }
    guard exists else { return 0 }
    var found = 0
    for try await version in try await connection.query(
      "SELECT coalesce(max(version), 0)::bigint FROM pld_schema", logger: quiet
    ).decode(Int64.self) {
      found = Int(version)
    }
    return found
  }

  /// How a database of schema `found`, newer than ``current``, may be used: by the worst mark a newer
  /// release recorded for the migrations this one does not know. A database without marks (before 0005)
  /// or missing the row of one of them is refused: nothing says what those migrations changed.
  private static func newerAccess(on connection: PostgresConnection, found: Int) async throws -> Access {
    let tooNew = SharedStoreError.schemaTooNew(found: found, supported: current)
    var hasMarks = false
    for try await count in try await connection.query(
      """
      SELECT count(*) FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'pld_schema' AND column_name = 'compatibility'
      """, logger: quiet
    ).decode(Int64.self) {
      hasMarks = count > 0
    }
    guard hasMarks else { throw tooNew }
    var unknown: [(version: Int, name: String, mark: MigrationCompatibility)] = []
    for try await (version, name, mark) in try await connection.query(
      "SELECT version, name, compatibility FROM pld_schema WHERE version > \(current) ORDER BY version",
      logger: quiet
    ).decode((Int, String, String).self) {
      unknown.append((version, name, MigrationCompatibility(rawValue: mark) ?? .incompatible))
    }
    guard unknown.map(\.version) == Array((current + 1)...found) else { throw tooNew }
    switch MigrationCompatibility.worst(of: unknown.map(\.mark)) {
    case .readWrite: return .readWrite
    case .readOnly: return .readOnly(migration: unknown.first { $0.mark == .readOnly }?.name ?? "")
    case .incompatible: throw tooNew
    }
  }

  /// The statements of a migration file: separated by a semicolon at the end of a line, comments left out.
  /// The statements of `migration` run in the migrations' transaction: every one but the `CREATE INDEX`
  /// of an index in ``concurrentIndexes`` (a shipped file is never edited; its index is built
  /// concurrently instead, after the transaction).
  static func transactionalStatements(of migration: (version: Int, name: String, sql: String)) -> [String] {
    let deferred = concurrentIndexes.filter { $0.version == migration.version }.map {
      "CREATE INDEX \($0.name) ON "
    }
    return statements(in: migration.sql).filter { statement in
      !deferred.contains { statement.hasPrefix($0) }
    }
  }

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
