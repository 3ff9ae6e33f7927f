import PersistentLiveDataBackend

extension PostgresStore {
  /// Waits until every version recorded for the local cache so far is in its file.
  ///
  /// ```swift
  /// try await flags.set(newFlags)
  /// store.flushLocalCache()   // the cache file holds it now
  /// ```
  package func flushLocalCache() {
    database.cache?.flush()
  }

  /// Writes what is pending to the local cache and closes its file; the store goes on without a cache
  /// (a replica that stops, in tests that start the next one in the same process).
  ///
  /// ```swift
  /// store.closeLocalCache()
  /// ```
  func closeLocalCache() {
    database.cache?.close()
  }
}
