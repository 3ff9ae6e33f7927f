import Foundation
public import PersistentLiveDataBackend

extension SharedCollection {
  /// Every change of the collection's members after `checkpoint`, by any replica, each exactly once:
  /// each version written and each removal, every member's in order.
  ///
  /// With `nil`, it first delivers every current member (its latest version, in id order), then every
  /// later change. Each `CollectionChange` carries a `CollectionCheckpoint`: save it with the work done
  /// and pass it after a restart — in this replica or another — to go on from there. Unlike observers,
  /// which coalesce to the latest dictionary, this delivers every version.
  ///
  /// ```swift
  /// let sessions = try await store.collection("sessions", of: Session.self)
  /// for try await change in sessions.changes(since: try await savedCheckpoint()) {
  ///   if let session = change.value { try await index.put(change.id, session) } else { try await index.drop(change.id) }
  ///   try await save(change.checkpoint)
  /// }
  /// ```
  ///
  /// **Order.** PostgreSQL commits concurrent transactions in an order no sequence shows, so changes are
  /// delivered by snapshots of the server rather than by commit order: each step delivers what committed
  /// after the last snapshot and before a new one, ordered by member id and version — every member's
  /// versions in order, members of one step in id order. A checkpoint is a snapshot (with a position
  /// within a step): every change the snapshot saw was delivered, every one it did not see is still to
  /// deliver, so nothing is skipped however commits interleave. Each step reads its changes by the
  /// writing transaction's id from the smallest one the snapshot had not seen finish, through an index.
  ///
  /// Versions that retention pruned (or a removal deleted) before they were delivered are skipped; a
  /// member's latest state never is. A read that fails because the server is unavailable is retried
  /// until it is back, so a server restart loses nothing. Other replicas' changes are looked for when
  /// this replica hears of a commit (``PostgresStore/run()`` listens) and at every periodic catch-up.
  /// The sequence keeps the collection alive and ends when the consuming task is cancelled. It throws
  /// `PersistentLiveDataError.unknownVersion(key:version:)` (the collection's name) at once for a
  /// checkpoint of an SQLite store or ahead of this server, and a decoding error for a version `Element`
  /// cannot decode.
  ///
  /// - Parameter checkpoint: Where to go on from; nil to start with every current member.
  /// - Returns: The changes after `checkpoint`, without end.
  public func changes(
    since checkpoint: CollectionCheckpoint?
  ) -> AsyncThrowingStream<CollectionChange<Element>, any Error> {
    let reader = SharedCollectionChangeReader(collection: self, from: checkpoint)
    return AsyncThrowingStream(unfolding: { try await reader.next() })
  }
}

/// The state of one ``SharedCollection/changes(since:)`` sequence: a ``SharedPrefixReader`` over the
/// collection's keys, started where the checkpoint says, whose rows become typed changes with their
/// checkpoints.
actor SharedCollectionChangeReader<Element: Codable & Sendable> {
  private let collection: SharedCollection<Element>
  private var checkpoint: CollectionCheckpoint?
  private var reader: SharedPrefixReader?

  init(collection: SharedCollection<Element>, from checkpoint: CollectionCheckpoint?) {
    self.collection = collection
    self.checkpoint = checkpoint
  }

  func next() async throws -> CollectionChange<Element>? {
    let database = collection.database
    let prefix = collection.prefix
    if reader == nil {
      guard
        let current = try await database.retryingWhileUnavailable({ try await database.currentSnapshot() })
      else { return nil }
      let start = try Self.phase(
        resuming: checkpoint, current: current, name: collection.name, prefix: prefix)
      reader = SharedPrefixReader(database: database, prefix: prefix, from: start)
    }
    while let item = try await reader?.next() {
      switch item {
      case .listed(let row, let snapshot):
        guard let id = collection.id(of: row.key) else { continue }
        return CollectionChange(
          id: id, version: row.version, value: try collection.decoding.decode(row),
          writtenAt: row.writtenAt,
          attribution: row.attribution,
          checkpoint: CollectionCheckpoint(position: 0, after: id, snapshot: snapshot))
      case .changed(let change, let since, let through):
        guard let id = collection.id(of: change.position.key) else { continue }
        let checkpoint = CollectionCheckpoint(
          position: change.position.version * 2 + (change.position.removed ? 1 : 0), after: id,
          snapshot: since, through: through)
        return try collection.collectionChange(
          of: change.change, id: id, removalAttribution: change.attribution, checkpoint: checkpoint)
      }
    }
    return nil
  }

  /// Where a checkpoint resumes, given the server's `current` snapshot.
  private static func phase(
    resuming checkpoint: CollectionCheckpoint?, current: String, name: String, prefix: String
  ) throws -> SharedPrefixReader.Phase {
    guard let checkpoint else { return .listing(snapshot: current, after: prefix) }
    // A checkpoint of an SQLite store, damaged, or of a server that has not reached it (another
    // cluster, or this one restored from an older backup) cannot be resumed here.
    guard let snapshot = checkpoint.snapshot, let saved = SnapshotText(snapshot),
      let now = SnapshotText(current),
      saved.xmax <= now.xmax,
      checkpoint.through.map({ SnapshotText($0).map { $0.xmax <= now.xmax } ?? false }) ?? true
    else {
      throw PersistentLiveDataError.unknownVersion(key: name, version: checkpoint.position)
    }
    if let through = checkpoint.through, let after = checkpoint.after {
      let position = SharedStatements.DeltaPosition(
        key: prefix + after, version: checkpoint.position >> 1, removed: checkpoint.position & 1 == 1)
      // No generation: the step's snapshot is not current, so the next one is taken at once after it.
      return .delta(since: snapshot, through: through, generation: nil, after: position)
    }
    if let after = checkpoint.after { return .listing(snapshot: snapshot, after: prefix + after) }
    return .waiting(since: snapshot, generation: nil)
  }
}

/// A snapshot as `pg_current_snapshot()::text` writes it — `xmin:xmax:xip,…` — taken apart to check a
/// checkpoint before the server sees it.
struct SnapshotText {
  let xmin: UInt64
  let xmax: UInt64

  init?(_ text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax,
      parts[2].split(separator: ",").allSatisfy({ UInt64($0) != nil })
    else { return nil }
    self.xmin = xmin
    self.xmax = xmax
  }
}
