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
  func inWriteTransaction(
    _ connection: SQLiteConnection, _ state: WriterState, _ body: (TransactionContext) throws -> Void
  ) throws -> CommitOutcome {
    let context = TransactionContext()
    state.transaction = context
    defer { state.transaction = nil }
    try connection.begin(.immediate)
    do {
      try body(context)
      try connection.commit()
    } catch {
      connection.rollback()
      throw error
    }
    state.noteCommit()
    return context.applyAll()
  }

  /// The value of `key` written earlier in the running transaction of this thread, if any.
  func stagedValue(for key: String) -> (value: any Sendable, version: Int64)? {
    writer.syncIfOpen { _, state in state.transaction?.staged[key] }
  }
}

/// The writes of one running ``StoreDatabase/transaction(_:)``, waiting for its commit.
final class TransactionContext {
  private var writes: [(write: PendingWrite, committed: CommittedVersion)] = []
  private(set) var staged: [String: (value: any Sendable, version: Int64)] = [:]
  private var savepointDepth = 0

  /// Records a write made inside the transaction; it is applied to memory at the commit.
  func record(_ write: PendingWrite, committed: CommittedVersion) {
    writes.append((write, committed))
    if let value = write.staged { staged[write.key] = (value, committed.version) }
  }

  /// Runs `body` in a savepoint; if it throws, its writes are undone and forgotten.
  func nested(connection: SQLiteConnection, _ body: () throws -> Void) throws {
    savepointDepth += 1
    defer { savepointDepth -= 1 }
    let name = "pld_savepoint_\(savepointDepth)"
    let mark = writes.count
    let stagedBefore = staged
    // Cached: a group commit runs one savepoint per call.
    try connection.cachedStatement("SAVEPOINT \(name)").run()
    do {
      try body()
      try connection.cachedStatement("RELEASE \(name)").run()
    } catch {
      try? connection.execute("ROLLBACK TO \(name)")
      try? connection.execute("RELEASE \(name)")
      writes.removeSubrange(mark...)
      staged = stagedBefore
      throw error
    }
  }

  /// The apply phase of the whole transaction: every committed write moves memory, in order.
  func applyAll() -> CommitOutcome {
    var outcome = CommitOutcome()
    for (write, committed) in writes {
      outcome.merge(StoreDatabase.apply(write, committed))
    }
    return outcome
  }
}
