public import Foundation

/// One committed change of a collection's member, as `PersistentCollection/changes(since:)` delivers
/// it: a version written, or a removal.
///
/// ```swift
/// for try await change in todos.changes(since: saved) {
///   if let todo = change.value { index.put(change.id, todo) } else { index.delete(change.id) }
///   try checkpoints.save(change.checkpoint)
/// }
/// ```
public struct CollectionChange<Element: Sendable>: Sendable {
  /// The member's id: its key without the collection's name and the `/` after it.
  public let id: String
  /// The member key's version; for a removal, the version the removal took.
  public let version: Int64
  /// The value written; nil when the member was removed.
  public let value: Element?
  /// When the version was committed (for a removal, when it was removed).
  public let writtenAt: Date
  /// Who wrote it, and why, when the writer said so (``WriteAttribution``).
  public let attribution: WriteAttribution?
  /// Resuming from it — in this process or another, after a restart — delivers what came after this
  /// change.
  public let checkpoint: CollectionCheckpoint

  /// A change; stores make them.
  package init(
    id: String, version: Int64, value: Element?, writtenAt: Date, attribution: WriteAttribution?,
    checkpoint: CollectionCheckpoint
  ) {
    self.id = id
    self.version = version
    self.value = value
    self.writtenAt = writtenAt
    self.attribution = attribution
    self.checkpoint = checkpoint
  }
}

extension CollectionChange: Equatable where Element: Equatable {}

/// A position in a collection's changes, to resume `PersistentCollection/changes(since:)` from: every
/// version committed after it, by any process, is delivered once.
///
/// It is opaque and `Codable`: save it with the work it marks as done (in the same transaction when
/// that work goes to the same store), and pass it again after a restart.
///
/// ```swift
/// let data = try JSONEncoder().encode(change.checkpoint)
/// let resumed = try JSONDecoder().decode(CollectionCheckpoint.self, from: data)
/// for try await change in todos.changes(since: resumed) { … }
/// ```
///
/// On an SQLite store, it is a position in the file's log of member changes (`pld_collection_log`),
/// whose numbers follow commit order and are never reused. While the first reading of every member
/// (`PersistentCollection/changes(since:)` with nil) is delivered, it also names the last member
/// delivered, so that resuming there delivers the members after it and the changes of those before it.
///
/// On a PostgreSQL shared store, it is a snapshot of the server (`pg_current_snapshot()`): every change
/// the snapshot saw was delivered, every one it did not see is still to deliver — which commit order
/// cannot say there (see the `SharedCollection` documentation). A checkpoint of one kind of store is
/// refused by the other.
public struct CollectionCheckpoint: Codable, Sendable, Hashable {
  /// The position in the log: every change above it is still to deliver. On a shared store, within a
  /// delta (``through`` set): the last change delivered's version times two, plus one for a removal.
  package let position: Int64
  /// During a first reading of every member: the id of the last member delivered (those above it are
  /// still to read); nil once every member was read. On a shared store, within a delta: the id of the
  /// last change delivered.
  package let after: String?
  /// A shared store's snapshot (as text) whose changes were all delivered; nil on an SQLite store.
  package let snapshot: String?
  /// A shared store's snapshot (as text) whose changes after ``snapshot`` are being delivered, in order,
  /// up to ``after`` and ``position``; nil between deltas.
  package let through: String?

  package init(position: Int64, after: String?, snapshot: String? = nil, through: String? = nil) {
    self.position = position
    self.after = after
    self.snapshot = snapshot
    self.through = through
  }

  private enum CodingKeys: String, CodingKey {
    case position = "p"
    case after = "a"
    case snapshot = "s"
    case through = "t"
  }
}
