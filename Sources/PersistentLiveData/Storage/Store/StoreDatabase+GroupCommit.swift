extension StoreDatabase {
  /// Runs `body` on the store's writer as part of the next group commit; suspends the caller (its thread
  /// is not blocked) until the group is committed and memory has moved.
  ///
  /// Cancelling the calling task withdraws the call if its group has not started; once it has, the write
  /// happens and the result is returned as usual.
  ///
  /// `isOneWrite`: `body` is exactly one ``commit(_:)`` of a value, nothing else (it then runs without a
  /// savepoint of its own: ``TransactionContext/unguarded(_:)``).
  ///
  /// The caller's ``WriteAttribution/current`` is read here, at the call, and is the one in effect while
  /// `body` runs on the writer: each call of a group records its own, never the writer thread's.
  func write<Result: Sendable>(
    isOneWrite: Bool = false, _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try ensureWritable()
    let attribution = try WriteAttribution.validatedCurrent()
    let attributed: @Sendable () throws -> Result = {
      try WriteAttribution.$current.withValue(attribution, operation: body)
    }
    let id = groupCommit.makeID()
    let result = Locked<Result?>(nil)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
        var request = GroupCommitQueue.Request(
          id: id,
          run: {
            result.withLock { $0 = nil }; let value = try attributed(); result.withLock { $0 = value }
          },
          finish: { error in
            if let error {
              continuation.resume(throwing: error)
            } else if let value = result.withLock({ $0 }) {
              continuation.resume(returning: value)
            } else {
              continuation.resume(throwing: CancellationError())
            }
          })
        request.isOneWrite = isOneWrite
        groupCommit.enqueue(request) { [self] calls, joining, committed in
          commitGroup(calls, joining: joining, committed: committed)
        }
      }
    } onCancel: {
      groupCommit.withdraw(id, with: CancellationError())
    }
  }

  /// Commits one group: every call's body in its own savepoint of one transaction — `first`, then the
  /// calls `joining()` returns until it returns none — one `COMMIT` (one sync), then the apply and notify
  /// phases for all of them, then each caller resumes. A body that throws undoes only its own writes; a
  /// failed commit fails every call and changes nothing. `committed()` runs when the transaction has
  /// ended, before any caller resumes.
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
                if request.isOneWrite {
                  try context.unguarded(request.run)
                } else {
                  try context.nested(connection: connection, request.run)
                }
                errors.append(nil)
              } catch {
                // Some SQLite errors end the whole transaction: then nothing of the group can commit.
                guard connection.isInTransaction else { throw error }
                errors.append(StoreErrors.map(error, path: displayPath))
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
