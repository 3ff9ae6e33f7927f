extension StoreDatabase {
  /// Runs `body` on the store's writer as part of the next group commit; suspends the caller (its thread
  /// is not blocked) until the group is committed and memory has moved.
  ///
  /// Cancelling the calling task withdraws the call if its group has not started; once it has, the write
  /// happens and the result is returned as usual.
  ///
  /// The caller's ``/PersistentLiveDataBackend/WriteAttribution/current`` is read here, at the call, and is
  /// the one in effect while `body` runs on the writer: each call of a group records its own, never the
  /// writer thread's.
  func write<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try ensureWritable()
    let attribution = try WriteAttribution.validatedCurrent()
    let result = Locked<Result?>(nil)
    let run: @Sendable () throws -> Void = {
      result.withLock { $0 = nil }
      let value = try WriteAttribution.$current.withValue(attribution, operation: body)
      result.withLock { $0 = value }
    }
    try await enqueue(.body(run))
    // A body that returned has its result; none means the call never ran.
    guard let value = result.withLock({ $0 }) else { throw CancellationError() }
    return value
  }

  /// Commits one prepared value write (``PersistentLiveData/write(_:)``) as part of the next group
  /// commit: the write travels down to the writer, which inserts it and runs its apply phase; nothing on
  /// the writer calls back into the live value. Suspends the caller like ``write(_:)``.
  func write(_ value: PendingWrite) async throws {
    try ensureWritable()
    try await enqueue(.value(value))
  }

  /// Queues `work` for the writer and suspends until its group has ended: returns when its writes
  /// committed, throws what failed them. Cancellation withdraws a call no group has taken yet.
  private func enqueue(_ work: GroupCommitQueue.Request.Work) async throws {
    let id = groupCommit.makeID()
    try await withTaskCancellationHandler {
      // Unsafe (no checking object per call): the queue finishes each request exactly once — the writer
      // when its group ends, or `withdraw` when it takes the request back before any group does.
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let request = GroupCommitQueue.Request(id: id, work: work) { error in
          if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
        groupCommit.enqueue(request) { [self] calls, joining, committed in
          commitGroup(calls, joining: joining, committed: committed)
        }
      }
    } onCancel: {
      groupCommit.withdraw(id, with: CancellationError())
    }
  }

  /// Commits one group in one transaction: each call's prepared value inserted as it is, each call's
  /// body in a savepoint of its own — `first`, then the calls `joining()` returns until it returns none —
  /// one `COMMIT` (one sync), then the apply and notify phases for all of them, then each caller resumes.
  /// A call that throws undoes only its own writes; a failed commit fails every call and changes nothing.
  /// `committed()` runs when the transaction has ended, before any caller resumes.
  func commitGroup(
    _ first: [GroupCommitQueue.Request], joining: () -> [GroupCommitQueue.Request] = { [] },
    committed: () -> Void = {}
  ) {
    var requests = first
    var errors: [(any Error)?] = []
    let outcome = Swift.Result<CommitOutcome, any Error> {
      try withConnection { connection, state in
        try inWriteTransaction(connection, state) { context in
          var next = 0
          repeat {
            for request in requests[next...] {
              do {
                switch request.work {
                case .value(let write):
                  try insert(write, into: context, connection: connection, cache: &state.keyHeads)
                case .body(let run):
                  try context.nested(connection: connection, run)
                }
                errors.append(nil)
              } catch {
                // Some SQLite errors end the whole transaction: then nothing of the group can commit.
                guard connection.isInTransaction else { throw error }
                guard error is SQLiteError else {
                  errors.append(StoreErrors.map(error, path: displayPath))
                  continue
                }
                // Built only here: the key's quoting allocates, which every write would pay.
                var site: DamageSite?
                if case .value(let write) = request.work { site = .writing(write.key) }
                errors.append(reportingDamage(StoreErrors.map(error, path: displayPath), at: site))
              }
            }
            next = requests.count
            requests += joining()
          } while next < requests.count
        }
      }
    }
    committed()
    switch outcome {
    case .success(let outcome):
      instrumentation.recordGroupCommit(size: requests.count)
      notify(outcome)
      for (request, error) in zip(requests, errors) { request.finish(error) }
    case .failure(let error):
      for request in requests { request.finish(error) }
    }
  }
}
