extension StoreDatabase {
  /// Runs `body` inside one write transaction; the writes in it commit together or not at all, and
  /// memory and observers hear of them only after the commit. Nested calls are savepoints.
  ///
  /// The body runs under the store's lock, on the calling thread — the one place user code does: its
  /// writes must commit together. Writes of other threads wait until it ends.
  func transaction(_ body: () throws -> Void) throws {
    try ensureWritable()
    let outcome = try withConnection { connection, state -> CommitOutcome? in
      if let running = state.transaction {
        try running.nested(connection: connection, body)
        return nil
      }
      return try inWriteTransaction(connection, state) { _ in try body() }
    }
    if let outcome { notify(outcome) }
  }

  /// Runs `body` in a new write transaction — `BEGIN IMMEDIATE` … `COMMIT`, rolled back if anything
  /// throws — with its context installed for the writes inside, then runs the apply phase. Call with the
  /// lock held; the caller notifies once the lock is released.
  ///
  /// A transaction that runs no user code (one `set`: `stagesValues` false) keeps no staged values, which
  /// only reads made inside a running body can ask for (``stagedValue(for:)``).
  func inWriteTransaction(
    _ connection: SQLiteConnection, _ state: WriterState, stagesValues: Bool = true,
    _ body: (TransactionContext) throws -> Void
  ) throws -> CommitOutcome {
    let context = TransactionContext(stagesValues: stagesValues)
    state.transaction = context
    defer { state.transaction = nil }
    try connection.begin(.immediate)
    do {
      try body(context)
      try instrumentation.measureCommit {
        if context.writeCount >= Self.unreportedCommitWrites {
          try withOwnWritesUnreported { try connection.commit() }
        } else {
          try connection.commit()
        }
      }
    } catch {
      connection.rollback()
      throw error
    }
    state.keyHeads.committed(context.keyHeads, connection: connection)
    state.noteCommit(connection)
    return context.applyAll(collectingMembers: !collections.isEmpty, instances: instances)
  }

  /// How many writes make a transaction's commit worth running unreported by the file watch
  /// (``withOwnWritesUnreported(_:)``): a commit writes about two pages to the `-wal` per key, each
  /// raising an event, and turning the reports off and on again costs two system calls. Measured on a
  /// two-core machine: a group commit of sixteen writes took about 7 % less time per write (median of 14
  /// alternating rounds); a single `set` took 11 % more.
  static let unreportedCommitWrites = 8

  /// Runs `commit` without the file watch reporting each of its writes to the `-wal`
  /// (``StoreBackgroundWork/withOwnWritesUnreported(_:)``).
  func withOwnWritesUnreported(_ commit: () throws -> Void) throws {
    if let backgroundWork { try backgroundWork.withOwnWritesUnreported(commit) } else { try commit() }
  }

  /// The value of `key` written earlier in the running transaction of this thread, if any.
  func stagedValue(for key: String) -> (value: any Sendable, version: Int64)? {
    writer.syncIfOpen { _, state in state.transaction?.staged[key] }
  }
}

/// The writes of one running ``StoreDatabase/transaction(_:)``, waiting for its commit.
final class TransactionContext {
  /// Whether ``record(_:committed:)`` keeps each write's value for reads inside the transaction.
  private let stagesValues: Bool
  private var writes: [(write: PendingWrite, committed: CommittedVersion)] = []
  private(set) var staged: [StoreKey: (value: any Sendable, version: Int64)] = [:]
  /// What each `record` replaced in `staged`, so that a savepoint rolled back restores it. (A copy of
  /// `staged` per savepoint would copy the whole dictionary for every call of a group commit.)
  private var stagedUndo: [(key: String, previous: (value: any Sendable, version: Int64)?)] = []
  private var savepointDepth = 0
  /// The key heads the transaction's writes read and made (``KeyHeadCache``).
  var keyHeads = TransactionHeads()

  /// How many writes the transaction holds so far (those of savepoints rolled back are gone).
  var writeCount: Int { writes.count }

  /// The savepoint statements of the first nesting levels, written once.
  private static let savepointSQL = (1...4).map {
    (SlottedSQL("SAVEPOINT pld_savepoint_\($0)"), SlottedSQL("RELEASE pld_savepoint_\($0)"))
  }

  init(stagesValues: Bool = true) {
    self.stagesValues = stagesValues
  }

  /// Records a write made inside the transaction; it is applied to memory at the commit.
  func record(_ write: PendingWrite, committed: CommittedVersion) {
    writes.append((write, committed))
    if stagesValues, let value = write.staged {
      let previous = staged.updateValue((value, committed.version), forKey: StoreKey(write.key))
      if savepointDepth > 0 { stagedUndo.append((write.key, previous)) }
    }
  }

  /// The cached `SAVEPOINT` (or `RELEASE`) statement of nesting level `depth`.
  private static func savepointStatement(
    depth: Int, release: Bool, connection: SQLiteConnection
  ) throws -> SQLiteStatement {
    guard depth <= savepointSQL.count else {
      return try connection.cachedStatement("\(release ? "RELEASE" : "SAVEPOINT") pld_savepoint_\(depth)")
    }
    let (savepoint, releaseSQL) = savepointSQL[depth - 1]
    return try connection.cachedStatement(release ? releaseSQL : savepoint)
  }

  /// Runs `body` in a savepoint; if it throws, its writes are undone and forgotten.
  func nested(connection: SQLiteConnection, _ body: () throws -> Void) throws {
    let mark = writes.count
    let undoMark = stagedUndo.count
    do {
      try savepoint(connection: connection, body)
      if savepointDepth == 0 { stagedUndo.removeAll(keepingCapacity: true) }
    } catch {
      keyHeads.isReliable = false  // heads its writes made may be gone
      writes.removeSubrange(mark...)
      for (key, previous) in stagedUndo[undoMark...].reversed() { staged[key] = previous }
      stagedUndo.removeSubrange(undoMark...)
      throw error
    }
  }

  /// Runs `body` in a savepoint of its own, rolled back if it throws, and nothing more: the statements
  /// of `body` record no write here (``nested(connection:_:)`` does that bookkeeping). For a value write's
  /// insert and the prune due after it (``StoreDatabase/insert(_:into:connection:cache:)``, which marks
  /// the heads itself when this throws).
  func savepoint(connection: SQLiteConnection, _ body: () throws -> Void) throws {
    savepointDepth += 1
    defer { savepointDepth -= 1 }
    let depth = savepointDepth
    // Cached: a group commit runs one savepoint per call.
    try Self.savepointStatement(depth: depth, release: false, connection: connection).run()
    do {
      try body()
      try Self.savepointStatement(depth: depth, release: true, connection: connection).run()
    } catch {
      try? connection.execute("ROLLBACK TO pld_savepoint_\(depth)")
      try? connection.execute("RELEASE pld_savepoint_\(depth)")
      throw error
    }
  }

  /// The apply phase of the whole transaction: every committed write moves memory, in order; with
  /// `collectingMembers`, each is also handed on for the live collections (in the notify phase).
  func applyAll(collectingMembers: Bool, instances: LiveInstanceRegistry) -> CommitOutcome {
    var outcome = CommitOutcome()
    for (write, committed) in writes {
      outcome.merge(StoreDatabase.apply(write, committed, instances: instances))
      if collectingMembers {
        outcome.members.append(.written(committed.row(payload: write.payload), staged: write.staged))
        outcome.membersOnMainActor = outcome.membersOnMainActor || write.notifiesOnMainActor
      }
    }
    return outcome
  }
}
