import Foundation
import PersistentLiveDataBackend
import PostgresNIO

/// The replicas running on a shared store's database (`pld_replicas`, shared schema 6): each one's row,
/// kept by ``heartbeat(database:)`` while ``PostgresStore/run()`` runs, and read by
/// ``PostgresStore/replicas()`` with the migrations that would strand each of them.
///
/// ```swift
/// group.addTask { await SharedReplicas.heartbeat(database: database) }   // until cancelled
/// let running = try await SharedReplicas.live(database: database)
/// ```
enum SharedReplicas {
  /// A row whose heartbeat is older than this is a replica that ended without a word.
  static let staleAfter = 60
  /// The longest time between two heartbeats.
  static let longestInterval = Duration.seconds(10)

  /// Ten catch-up intervals, between 1 s and ``longestInterval``: one statement per replica that often.
  static func interval(catchUp: Duration) -> Duration {
    min(max(catchUp * 10, .seconds(1)), longestInterval)
  }

  /// Records this replica until cancelled, then deletes its row (waiting a second at most: a server that
  /// went away does not hold up the end of `run()`; its row then goes stale). A failed beat is tried
  /// again at the next one: the row is not the store's work, and never stops it.
  static func heartbeat(database: SharedDatabase) async {
    let id = UUID().uuidString.lowercased()
    let interval = interval(catchUp: database.options.catchUpInterval)
    // Once per run: the host name can take a lookup.
    let host = ProcessInfo.processInfo.hostName
    var recorded = false
    while !Task.isCancelled {
      do {
        let first = !recorded
        // Not `bounded`: a heartbeat is not the store's work, and says nothing to its reachability.
        try await withDeadline(database.options.operationTimeout, operation: "record the replica") {
          try await beat(id: id, host: host, first: first, database: database)
        }
        recorded = true
      } catch {
        database.logger.debug(
          "Could not record the replica in pld_replicas",
          metadata: ["error": "\(SharedDatabase.describe(error))"])
      }
      do { try await Task.sleep(for: interval) } catch { break }
    }
    guard recorded else { return }
    // A task of its own: this one is cancelled, and the statement must still go out.
    let client = database.client
    let removal = Task {
      try await withDeadline(.seconds(1), operation: "remove the replica's row") {
        try await client.query("DELETE FROM pld_replicas WHERE id = \(id)", logger: SharedSchema.quiet)
      }
    }
    _ = try? await removal.value
  }

  /// Adds or refreshes the row; the first beat also deletes the rows of replicas gone for a minute.
  private static func beat(id: String, host: String, first: Bool, database: SharedDatabase) async throws {
    if first {
      try await database.client.query(
        "DELETE FROM pld_replicas WHERE heartbeat_at < now() - make_interval(secs => \(staleAfter))",
        logger: SharedSchema.quiet)
    }
    let access = database.isReadOnly ? "read-only" : "read-write"
    let pid = Int(ProcessInfo.processInfo.processIdentifier)
    try await database.client.query(
      """
      INSERT INTO pld_replicas (id, host, pid, library_version, schema_version, access)
      VALUES (\(id), \(host), \(pid), \(LibraryVersion.current), \(SharedSchema.current), \(access))
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), access = EXCLUDED.access
      """, logger: SharedSchema.quiet)
  }

  /// The replicas whose heartbeat is recent, oldest first, each with the migrations — applied, or known
  /// to this release and still to apply — that its release does not know and that are not read-write.
  ///
  /// Nothing is migrated: looking must not apply the very migration it warns about. A database older
  /// than schema 6 records no replica (releases before it do not record themselves).
  static func live(database: SharedDatabase) async throws -> [SharedReplica] {
    try await database.bounded("list the replicas") {
      let exists = try await database.client.query(
        "SELECT to_regclass('pld_replicas') IS NOT NULL", logger: SharedSchema.quiet)
      for try await found in exists.decode(Bool.self) where !found { return [] }
      var marks: [Int: (name: String, mark: String)] = [:]
      for migration in SharedSchema.migrations {
        marks[migration.version] = (
          migration.name, SharedSchema.compatibility(of: migration.version).rawValue
        )
      }
      let applied = try await database.client.query(
        "SELECT version, name, compatibility FROM pld_schema", logger: SharedSchema.quiet)
      for try await (version, name, mark) in applied.decode((Int32, String, String).self) {
        marks[Int(version)] = (name, mark)
      }
      let rows = try await database.client.query(
        """
        SELECT id, host, pid, library_version, schema_version, access, started_at, heartbeat_at
        FROM pld_replicas WHERE heartbeat_at >= now() - make_interval(secs => \(staleAfter))
        ORDER BY started_at, id
        """, logger: SharedSchema.quiet)
      var replicas: [SharedReplica] = []
      for try await (id, host, pid, library, schema, access, started, heartbeat) in rows.decode(
        (String, String, Int32, String, Int32, String, Date, Date).self)
      {
        let stranding = marks.filter { $0.key > Int(schema) && $0.value.mark != "read-write" }
          .sorted { $0.key < $1.key }.map { "\($0.value.name) (\($0.value.mark))" }
        replicas.append(
          SharedReplica(
            id: id, host: host, processID: Int(pid), libraryVersion: library, schemaVersion: Int(schema),
            isReadOnly: access == "read-only", startedAt: started, heartbeatAt: heartbeat,
            strandedBy: stranding))
      }
      return replicas
    }
  }
}
