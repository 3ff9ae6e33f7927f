internal import Foundation

extension PersistentCollection {
  /// Every change of the collection's members after `checkpoint`, in commit order: each version written
  /// and each removal, by this process or any other, exactly once.
  ///
  /// With `nil`, it first delivers every current member (its latest version, in id order), then every later
  /// change. Each ``/PersistentLiveDataBackend/CollectionChange`` carries a
  /// ``/PersistentLiveDataBackend/CollectionCheckpoint``: save it with the work done, and pass it after a
  /// restart — in this process or another — to go on from there. Unlike observers, which coalesce to the
  /// latest dictionary, this delivers every version: for indexes, search, syncing to another system, audit.
  ///
  /// ```swift
  /// let todos = try store.collection("todo", of: Todo.self)
  /// for try await change in todos.changes(since: try savedCheckpoint()) {
  ///   if let todo = change.value { try search.index(change.id, todo) } else { try search.drop(change.id) }
  ///   try save(change.checkpoint)
  /// }
  /// ```
  ///
  /// Changes are read from the file's log of member changes, page by page as they are consumed, so a
  /// slow consumer holds no growing buffer. Versions that retention pruned (or a removal deleted)
  /// before they were delivered are skipped; a member's latest state never is. Changes of other
  /// processes arrive when the store notices them (``StoreOptions/externalChangePollInterval``). The
  /// sequence keeps the collection alive and finishes when the consuming task is cancelled or the store
  /// is closed. It throws:
  /// - ``/PersistentLiveDataBackend/PersistentLiveDataError/unknownVersion(key:version:)`` (the collection's
  ///   name and the position) at once for a checkpoint ahead of this file's log — saved from another file, or
  ///   from this one before it was restored from an older backup — or of a shared store;
  /// - ``/PersistentLiveDataBackend/PersistentLiveDataError/readOnly(path:)`` on a read-only store whose file
  ///   never recorded the collection (open it once from a writable store);
  /// - a decoding error for a version `Element` cannot decode (again at every call from the same
  ///   checkpoint), or a storage error.
  ///
  /// - Parameter checkpoint: Where to go on from; nil to start with every current member.
  /// - Returns: The changes after `checkpoint`, without end.
  public func changes(
    since checkpoint: CollectionCheckpoint?
  ) -> AsyncThrowingStream<
    CollectionChange<Element>, any Error
  > {
    let reader = CollectionChangeReader(collection: self, from: checkpoint)
    return AsyncThrowingStream(unfolding: { try await reader.next() })
  }
}

/// The state of one ``PersistentCollection/changes(since:)`` sequence: a checkpoint taken apart into the
/// phases that deliver what comes after it.
///
/// A checkpoint `(position, after: id)` taken during a first reading of every member means: the members
/// up to `id` were delivered as they were at `position`, those above it not yet. Resuming reads, in one
/// read transaction, the members above `id` and the log's newest position `newest`; it delivers the
/// logged changes of members up to `id` in `(position, newest]` (the "catch-up"), then the members
/// above `id` as they are at `newest` (the "snapshot"), then every logged change after `newest` (the
/// "live" phase). Each change is delivered once: a member is either caught up from the log or read in
/// the snapshot, and the live phase starts where both ended. A checkpoint without `after` goes straight
/// to the live phase at its position; no checkpoint is `(0, after: "")`.
actor CollectionChangeReader<Element: Codable & Sendable> {
  private enum Phase {
    case start(CollectionCheckpoint)
    case catchUp(position: Int64, through: Int64, upper: String, after: String, snapshot: [StoredRow])
    case snapshot(ArraySlice<StoredRow>, position: Int64)
    case live(position: Int64)
  }

  private let collection: PersistentCollection<Element>
  private var phase: Phase
  private var page: ArraySlice<LoggedMemberChange> = []

  static var pageSize: Int { 256 }

  init(collection: PersistentCollection<Element>, from checkpoint: CollectionCheckpoint?) {
    self.collection = collection
    phase = .start(checkpoint ?? CollectionCheckpoint(position: 0, after: ""))
  }

  func next() async throws -> CollectionChange<Element>? {
    let database = collection.database
    let prefix = collection.prefix
    guard let prefixUpper = MemberKey.upperBound(of: prefix) else { return nil }
    while true {
      if Task.isCancelled { return nil }
      switch phase {
      case .start(let checkpoint):
        do {
          guard try database.recordCollection(collection.name) else {
            throw PersistentLiveDataError.readOnly(path: database.displayPath)
          }
          guard checkpoint.snapshot == nil else {
            throw PersistentLiveDataError.unknownVersion(key: collection.name, version: checkpoint.position)
          }
          let newest = try database.collectionLogNewest()
          guard checkpoint.position <= newest else {
            throw PersistentLiveDataError.unknownVersion(key: collection.name, version: checkpoint.position)
          }
          guard let after = checkpoint.after else {
            phase = .live(position: checkpoint.position)
            continue
          }
          let (rows, position, _) = try database.memberRows(prefix: prefix, after: after)
          phase = .catchUp(
            position: checkpoint.position, through: position, upper: prefix + after + "\u{0}", after: after,
            snapshot: rows)
        } catch PersistentLiveDataError.storeClosed {
          return nil
        }
      case .catchUp(let position, let through, let upper, let after, let snapshot):
        if page.isEmpty {
          guard
            let read = try database.collectionLog(
              lower: prefix, upper: upper, after: position, through: through, limit: Self.pageSize)
          else { return nil }
          guard !read.isEmpty else {
            phase = .snapshot(snapshot[...], position: through)
            continue
          }
          page = read[...]
        }
        while let logged = page.popFirst() {
          phase = .catchUp(
            position: logged.position, through: through, upper: upper, after: after, snapshot: snapshot)
          if let change = try delivery(of: logged, checkpoint: .init(position: logged.position, after: after))
          {
            return change
          }
        }
      case .snapshot(var rows, let position):
        guard let row = rows.popFirst() else {
          phase = .live(position: position)
          continue
        }
        phase = .snapshot(rows, position: position)
        guard let id = collection.id(of: row.key) else { continue }
        return CollectionChange(
          id: id, version: row.version, value: try collection.decoding.decode(row), writtenAt: row.writtenAt,
          attribution: row.attribution, checkpoint: CollectionCheckpoint(position: position, after: id))
      case .live(let position):
        if page.isEmpty {
          // Noted before reading: a commit between the read and the wait ends the wait at once.
          let generation = database.changeSignal.generation
          guard
            let read = try database.collectionLog(
              lower: prefix, upper: prefixUpper, after: position, limit: Self.pageSize)
          else { return nil }
          if read.isEmpty {
            guard await database.changeSignal.wait(after: generation) else { return nil }
            continue
          }
          page = read[...]
        }
        while let logged = page.popFirst() {
          phase = .live(position: logged.position)
          if let change = try delivery(of: logged, checkpoint: .init(position: logged.position, after: nil)) {
            return change
          }
        }
      }
    }
  }

  /// The change to deliver for a logged one, nil for a row whose version is gone.
  private func delivery(
    of logged: LoggedMemberChange, checkpoint: CollectionCheckpoint
  ) throws
    -> CollectionChange<Element>?
  {
    guard let change = logged.change, let id = collection.id(of: change.key) else { return nil }
    return try collection.collectionChange(
      of: change, id: id, removalAttribution: logged.attribution, checkpoint: checkpoint)
  }
}
