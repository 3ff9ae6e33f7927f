/// What a prune deleted, and which keys kept more than asked because of their recorded retention.
package struct PruneOutcome: Sendable, Equatable {
  /// The number of rows deleted.
  package var deleted = 0
  /// Keys whose recorded retention kept more versions than the prune asked for, with that retention.
  package var keptByRetention: [StoreKey: HistoryRetention] = [:]

  /// Nothing deleted yet.
  package init() {}
}
