extension FileChangeMonitor {
  /// The files and folders watched now, and the watchers they serve (for tests and diagnostics).
  ///
  /// ```swift
  /// let (folders, watchers) = monitor.counts
  /// ```
  var counts: (folders: Int, watchers: Int) {
    #if os(Linux)
    registry.withLock { ($0.folders.count, $0.watchOfToken.count) }
    #else
    (0, 0)
    #endif
  }

  /// How many events the watch of `token` has reported (read) so far; nil when `token` stands for no
  /// watch (for tests and diagnostics).
  ///
  /// ```swift
  /// let before = monitor.reportedEvents(token) ?? 0
  /// ```
  func reportedEvents(_ token: UInt64) -> Int? {
    #if os(Linux)
    registry.withLock { registry in registry.watchOfToken[token].map { registry.reportedEvents[$0] ?? 0 } }
    #else
    nil
    #endif
  }

  /// How many pauses of reading the watch of `token` spent not reporting writes so far; nil when
  /// `token` stands for no watch (for tests and diagnostics).
  ///
  /// ```swift
  /// let silenced = monitor.pausedReports(token) ?? 0
  /// ```
  func pausedReports(_ token: UInt64) -> Int? {
    #if os(Linux)
    registry.withLock { registry in registry.watchOfToken[token].map { registry.pauses[$0] ?? 0 } }
    #else
    nil
    #endif
  }
}
