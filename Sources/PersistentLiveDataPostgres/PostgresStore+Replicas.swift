public import Foundation
import PersistentLiveDataBackend

/// A replica running on a shared store's database, as it records itself while its
/// ``PostgresStore/run()`` runs: which release it is, which shared schema it knows, and whether a
/// migration of the database leaves it read-only or would refuse it.
///
/// ```swift
/// for replica in try await store.replicas() where !replica.strandedBy.isEmpty {
///   logger.warning("replica \(replica.host):\(replica.processID) is stranded by \(replica.strandedBy)")
/// }
/// ```
public struct SharedReplica: Sendable, Hashable {
  /// A random id, new at every `run()`.
  public var id: String
  /// The host name of the machine it runs on.
  public var host: String
  /// Its process id on that host.
  public var processID: Int
  /// Its release of the library, e.g. `0.4.0`.
  public var libraryVersion: String
  /// The newest shared schema its release knows: it knows migrations 1 through this one.
  public var schemaVersion: Int
  /// Whether it runs read-only: a newer release applied a migration marked read-only for it.
  public var isReadOnly: Bool
  /// When its `run()` recorded it.
  public var startedAt: Date
  /// Its latest heartbeat (at most 10 s old while it runs; a replica silent for a minute is left out).
  public var heartbeatAt: Date
  /// The migrations it does not know that are marked `read-only` or `incompatible` — applied to the
  /// database, or known to this release and applied at its next start — as `FILE (MARK)`, in order:
  /// after one of them it can only read, or cannot start. Empty when it runs as before.
  public var strandedBy: [String]

  /// A replica as ``PostgresStore/replicas()`` reads it.
  ///
  /// ```swift
  /// let replica = SharedReplica(
  ///   id: "a1", host: "web-1", processID: 42, libraryVersion: "0.4.0", schemaVersion: 6,
  ///   isReadOnly: false, startedAt: Date(), heartbeatAt: Date(), strandedBy: [])
  /// ```
  public init(
    id: String, host: String, processID: Int, libraryVersion: String, schemaVersion: Int, isReadOnly: Bool,
    startedAt: Date, heartbeatAt: Date, strandedBy: [String]
  ) {
    self.id = id
    self.host = host
    self.processID = processID
    self.libraryVersion = libraryVersion
    self.schemaVersion = schemaVersion
    self.isReadOnly = isReadOnly
    self.startedAt = startedAt
    self.heartbeatAt = heartbeatAt
    self.strandedBy = strandedBy
  }
}

extension PostgresStore {
  /// The replicas running on this store's database — every `PostgresStore.run()` of this release or a
  /// later one, this one's included — oldest first, each with the migrations that strand it.
  ///
  /// Look before applying a migration marked read-only or incompatible (upgrading one replica applies
  /// it): a replica that does not know it can then only read, or is refused at its next start.
  ///
  /// ```swift
  /// let replicas = try await store.replicas()
  /// let stranded = replicas.filter { !$0.strandedBy.isEmpty }
  /// ```
  /// - Returns: The replicas whose heartbeat is less than a minute old.
  /// - Throws: ``SharedStoreError`` when the server cannot be reached or the schema is not usable.
  public func replicas() async throws -> [SharedReplica] {
    try await SharedReplicas.live(database: database)
  }
}
