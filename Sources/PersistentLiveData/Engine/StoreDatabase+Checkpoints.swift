internal import Logging

extension StoreDatabase {
  /// How many commits make a background checkpoint worthwhile, and how long writes must have paused.
  static let backgroundCheckpointCommits = 32
  static let backgroundCheckpointPause: Duration = .milliseconds(20)
  /// SQLite's own automatic checkpoint (run by whichever commit crosses the limit) stays at SQLite's
  /// default of 1,000 pages, for stores whose writes never pause. A larger limit makes those stalls rarer
  /// but longer (measured: p99.9 of 10 KB writes doubled at 4,096 pages), and lets the WAL grow.
  static let fallbackAutoCheckpointPages: Int64 = 1_000

  /// Copies the WAL back into the database when this store has written and then paused, so that the
  /// caller of `set` rarely pays for a checkpoint (3–5 ms each). A PASSIVE checkpoint never blocks
  /// other connections and changes nothing about durability: the WAL is synced before it is copied.
  ///
  /// - Returns: Whether a checkpoint is still pending: enough commits, but writes have not paused yet
  ///   (or a transaction is running). The caller looks again after another pause.
  @discardableResult
  func checkpointIfIdle() -> Bool {
    let started = ContinuousClock.now
    var isPending = false
    let checkpointed = writer.syncIfOpen { connection, state -> Int? in
      guard state.transaction == nil, state.checkpoints.isDue else {
        isPending = state.checkpoints.isPending
        return nil
      }
      state.checkpoints.reset()
      return (try? connection.walCheckpoint(.passive))?.checkpointedFrames ?? -1
    }
    // Logging is a handler's code: after the lock is released.
    if let checkpointed {
      options.logger?.debug(
        "Background checkpoint",
        metadata: [
          "path": "\(displayPath)", "frames": "\(checkpointed)",
          "milliseconds": "\(Self.milliseconds(since: started))",
        ])
    }
    return isPending
  }

}

/// Commits since the last checkpoint, and when the last one happened: the background work checkpoints
/// once writes pause, so that callers rarely pay for it.
struct CheckpointSchedule {
  private var commitsSinceCheckpoint = 0
  private var lastCommit = ContinuousClock.now

  mutating func noteCommit() {
    commitsSinceCheckpoint += 1
    lastCommit = .now
  }

  /// Enough commits for a checkpoint to be worthwhile.
  var isPending: Bool {
    commitsSinceCheckpoint >= StoreDatabase.backgroundCheckpointCommits
  }

  /// Pending, and writes have paused.
  var isDue: Bool {
    isPending && ContinuousClock.now - lastCommit >= StoreDatabase.backgroundCheckpointPause
  }

  mutating func reset() {
    commitsSinceCheckpoint = 0
  }
}
