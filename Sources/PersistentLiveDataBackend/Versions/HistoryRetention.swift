/// How many versions of each key a store keeps.
///
/// The latest version is always kept. Version numbers are never reused, whatever is pruned.
///
/// ```swift
/// StoreOptions(retention: .last(10))   // history(limit:) returns at most 10 versions
/// ```
public enum HistoryRetention: Sendable, Equatable {
  /// Keep every version.
  ///
  /// ```swift
  /// StoreOptions(retention: .all)   // the default
  /// ```
  case all
  /// Keep the newest `n` versions of each key (at least 1). Older rows are deleted in batches, so a
  /// few more may stay on disk for a while; they are no longer visible through the API.
  ///
  /// ```swift
  /// StoreOptions(retention: .last(50))   // .last(0) keeps 1: the latest is never deleted
  /// ```
  case last(Int)

  /// The number of versions kept per key, or nil for all.
  package var limit: Int64? {
    switch self {
    case .all: return nil
    case .last(let count): return Int64(max(1, count))
    }
  }
}
