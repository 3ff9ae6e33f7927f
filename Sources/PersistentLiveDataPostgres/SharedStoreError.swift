public import Foundation

/// What can go wrong between a shared store and its PostgreSQL server.
///
/// A shared store throws this type for what the server causes, and, for what a value, key or version
/// causes, the same `PersistentLiveDataError` cases an SQLite store throws for them: `invalidKey`,
/// `typeMismatch`, `encodingFailed`, `valueTooDeep`, `undecodable`, `valueSchemaTooNew`,
/// `unknownVersion`, `changesPruned` — never a file case. The article *Shared stores* lists every case
/// with when it comes. Each says what happened and what to do; none leaves memory changed.
///
/// ```swift
/// do {
///   try await flags.set(newFlags)
/// } catch let error as SharedStoreError {
///   logger.error("\(error)")   // the server is down, timed out, refused…
/// }
/// ```
public enum SharedStoreError: Error, CustomStringConvertible, LocalizedError, Sendable {
  /// The server could not be reached, or the connection dropped before the answer came. Memory has not
  /// changed. A write whose connection dropped after it was sent may still have been committed: the
  /// store catches up with it like with another replica's write. Retry once the server is back.
  case serverUnavailable(operation: String, reason: String)
  /// The call did not finish within ``PostgresStoreOptions/operationTimeout``. A write may or may not
  /// have been committed: the store catches up with whatever the server holds.
  case timedOut(operation: String, after: Duration)
  /// The server refused the statement (SQLSTATE `code`).
  case server(operation: String, code: String, message: String)
  /// The database holds tables of a newer version of this library than this one knows.
  case schemaTooNew(found: Int, supported: Int)
  /// A replica of a newer release applied `migration` to the shared tables and marked it read-only for
  /// releases that do not know it (the README's compatibility promise): this replica reads and follows the
  /// other replicas, and each write throws this, with nothing written. Upgrade the library to write again.
  case readOnlyMigration(migration: String)
  /// A schema migration failed; the transaction that applied it was rolled back.
  case migrationFailed(version: Int, reason: String)
  /// A write was given to ``PostgresStore/transaction(isolation:_:)`` for a value of another store.
  case foreignValue(key: String)

  /// What happened and what to do, in one sentence.
  ///
  /// ```swift
  /// logger.error("\(error.description)")
  /// ```
  public var description: String {
    switch self {
    case .serverUnavailable(let operation, let reason):
      "\(operation): the PostgreSQL server is unavailable (\(reason)); nothing changed in memory — "
        + "retry once it is reachable"
    case .timedOut(let operation, let after)
    where ["set", "update", "rollback", "transaction"].contains(operation):
      "\(operation) did not finish within \(after) (PostgresStoreOptions.operationTimeout); the write may or "
        + "may not have been committed — the store catches up with the server, read the value again"
    case .timedOut(let operation, let after):
      "\(operation) did not finish within \(after) (PostgresStoreOptions.operationTimeout); nothing was "
        + "changed — retry once the server answers again"
    case .server(let operation, let code, let message):
      "\(operation): the PostgreSQL server refused it (SQLSTATE \(code)): \(message)"
    case .schemaTooNew(let found, let supported):
      "the database holds shared-store schema version \(found), newer than the \(supported) this version "
        + "of PersistentLiveDataPostgres knows; upgrade the library"
    case .readOnlyMigration(let migration):
      "a newer version of PersistentLiveDataPostgres applied migration \(migration) to the shared tables, "
        + "which versions that do not know it may read but not write; nothing was written — upgrade the library"
    case .migrationFailed(let version, let reason):
      "applying shared-store schema version \(version) failed and was rolled back: \(reason)"
    case .foreignValue(let key):
      "the value of key \(key.debugDescription) belongs to another PostgresStore; write it in a transaction "
        + "of its own store"
    }
  }

  /// The same sentence as ``description``.
  ///
  /// ```swift
  /// do { try await flags.set(newFlags) } catch { show(error.localizedDescription) }
  /// ```
  public var errorDescription: String? { description }
}
