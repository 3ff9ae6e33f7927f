import Foundation
import PersistentLiveDataBackend

/// Every change of the keys that start with a prefix, by any replica, each exactly once, read by
/// snapshots of the server: what ``SharedCollection/changes(since:)`` and `pld-tool serve` follow.
///
/// Phases: a *listing* delivers the keys above a key as they were in a snapshot `S` (each one's newest
/// row visible in `S`); then *steps* each deliver the *delta* between two snapshots — the rows and
/// removals of the prefix's keys whose writing transaction `S` did not see and the next snapshot `T`
/// did — in (key, version, write before removal) order, page by page; between steps it *waits* for this
/// replica to hear of a commit. Each change is delivered once: a listing delivers the state in `S`, and
/// the steps everything `S` did not see. A read that fails because the server is unavailable is retried
/// until it is back; the sequence ends (nil) when the task is cancelled.
///
/// ```swift
/// let reader = SharedPrefixReader(database: database, prefix: "", from: .waiting(since: snapshot, generation: nil))
/// while let item = try await reader.next() { … }
/// ```
actor SharedPrefixReader {
  /// Where the reader is; the position of the last item it returned.
  enum Phase: Sendable {
    /// Delivering the keys above `after` (a whole key) as they were in `snapshot`.
    case listing(snapshot: String, after: String)
    /// Every change `since` saw was delivered; `generation` is the change signal's when the last snapshot
    /// was taken (nil: look at once).
    case waiting(since: String, generation: UInt64?)
    /// `generation` as for waiting, for the wait after the step.
    case delta(since: String, through: String, generation: UInt64?, after: SharedStatements.DeltaPosition?)
  }

  /// What the reader delivers.
  enum Item: Sendable {
    /// A key's newest row in the listing's `snapshot`.
    case listed(StoredRow, snapshot: String)
    /// A version written or a removal, committed after `since` and visible in `through`.
    case changed(SharedDatabase.DeltaChange, since: String, through: String)
  }

  private let database: SharedDatabase
  private let prefix: String
  private var phase: Phase
  /// The rest of the page of a listing, and of a step.
  private var listed: ArraySlice<StoredRow> = []
  private var stepped: ArraySlice<SharedDatabase.DeltaChange> = []

  static var pageSize: Int { 256 }

  init(database: SharedDatabase, prefix: String, from phase: Phase) {
    self.database = database
    self.prefix = prefix
    self.phase = phase
  }

  /// The next item; nil when the task was cancelled.
  func next() async throws -> Item? {
    let database = database
    let prefix = prefix
    while true {
      if Task.isCancelled { return nil }
      switch phase {
      case .listing(let snapshot, let after):
        if listed.isEmpty {
          guard
            let rows = try await database.retryingWhileUnavailable({
              try await database.memberRows(
                prefix: prefix, asOf: snapshot, after: after, limit: Self.pageSize)
            })
          else { return nil }
          guard !rows.isEmpty else {
            phase = .waiting(since: snapshot, generation: nil)
            continue
          }
          listed = rows[...]
        }
        if let row = listed.popFirst() {
          phase = .listing(snapshot: snapshot, after: row.key)
          return .listed(row, snapshot: snapshot)
        }
      case .waiting(let since, let generation):
        if let generation, !(await database.changeSignal.wait(after: generation)) { return nil }
        // Noted before the snapshot: a commit it does not see wakes the next wait at once.
        let noted = database.changeSignal.generation
        guard
          let through = try await database.retryingWhileUnavailable({ try await database.currentSnapshot() })
        else { return nil }
        phase =
          through == since
          ? .waiting(since: since, generation: noted)
          : .delta(since: since, through: through, generation: noted, after: nil)
      case .delta(let since, let through, let generation, let after):
        if stepped.isEmpty {
          guard
            let changes = try await database.retryingWhileUnavailable({
              try await database.delta(
                prefix: prefix, since: since, through: through, after: after, limit: Self.pageSize)
            })
          else { return nil }
          guard !changes.isEmpty else {
            phase = .waiting(since: through, generation: generation)
            continue
          }
          stepped = changes[...]
        }
        if let change = stepped.popFirst() {
          phase = .delta(since: since, through: through, generation: generation, after: change.position)
          return .changed(change, since: since, through: through)
        }
      }
    }
  }
}
