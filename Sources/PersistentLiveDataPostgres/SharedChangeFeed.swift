import PersistentLiveDataBackend

/// Where a replica's periodic catch-up resumes: the horizon of its last look at the server.
///
/// Each value row records the id of the transaction that wrote it (`changed_by`, schema version 2). A
/// catch-up asks, in one statement, for the newest version of every key written by a transaction with
/// an id of at least the horizon, and for its own snapshot's xmin, which becomes the next horizon.
///
/// Why no commit is skipped: transaction ids are not assigned in commit order, so "ids above the largest
/// seen" would miss a transaction that got a small id and committed late. The xmin of a snapshot is the
/// smallest id still running when it was taken: every transaction that snapshot does not see (running
/// then, or begun later) has an id of at least its xmin. So the next look, from that xmin on, finds every
/// commit the last look missed (and some it saw, which the version comparison ignores). A transaction left
/// open on the server holds the xmin back: looks then re-read what changed since it began, never less.
///
/// A key that becomes live during a look may be missed by it: the look's rows were matched against the
/// live keys before the key registered, and its first read may be older than the look's snapshot. So a
/// new live value lowers the horizon to what it was before its first read (``lower(to:)``): a snapshot
/// taken before that read saw nothing the read missed. A look that ends keeps the lowest such horizon.
///
/// ```swift
/// let since = feed.begin()              // 0: compare every live key instead
/// let (horizon, changed) = try await database.changedHeads(since: since)
/// …                                     // bring every live key in `changed` up to date
/// feed.end(horizon: horizon)
/// ```
final class SharedChangeFeed: Sendable {
  private struct State {
    /// 0 until a look succeeded: the next one compares every live key.
    var horizon: Int64 = 0
    /// The lowest horizon a new live value or collection asked for since the last look ended.
    var lowestSinceBegin: Int64 = .max
    /// The lowest of those that was a server snapshot's horizon (not 0).
    var lowestKnownSinceBegin: Int64 = .max
  }

  private let state = Locked(State())

  /// The horizon the next look starts from; 0 when it must compare every live key.
  var horizon: Int64 { state.withLock { $0.horizon } }

  /// The lowest server horizon a new live value or collection asked for since the last look ended; nil
  /// when none did. Before the first look it is the only horizon known: a collection's open read it
  /// from the server.
  var lowered: Int64? {
    state.withLock { $0.lowestKnownSinceBegin == .max ? nil : $0.lowestKnownSinceBegin }
  }

  /// Starts a look (one at a time); returns where it starts.
  func begin() -> Int64 {
    state.withLock { $0.horizon }
  }

  /// Ends a look that brought every live key up to its snapshot, whose xmin was `horizon`. A horizon
  /// asked for since the look began is kept: what became live during the look is caught up by the next.
  /// When that is 0 (a key became live before any look), the server horizons asked for are kept too:
  /// the next look compares every live key and reads collections from there.
  func end(horizon: Int64) {
    state.withLock { state in
      state.horizon = min(horizon, state.lowestSinceBegin)
      state.lowestSinceBegin = .max
      if state.horizon > 0 { state.lowestKnownSinceBegin = .max }
    }
  }

  /// A key became live whose first read came after a look at `horizon`: the next look starts no later.
  func lower(to horizon: Int64) {
    state.withLock { state in
      state.horizon = min(state.horizon, horizon)
      state.lowestSinceBegin = min(state.lowestSinceBegin, horizon)
      if horizon > 0 { state.lowestKnownSinceBegin = min(state.lowestKnownSinceBegin, horizon) }
    }
  }
}
