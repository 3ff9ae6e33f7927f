import PersistentLiveDataBackend

extension PostgresStore {
  /// The events of this store from now on, as `PersistentStore.events()` gives
  /// them: a version another replica wrote that a live value cannot decode, a live value that started
  /// without its newest version. They are logged to ``PostgresStoreOptions/logger`` as well.
  ///
  /// Each call returns a new stream; every stream gets every event, and keeps the newest 256 its reader
  /// has not taken yet. The streams finish when the store is released.
  ///
  /// ```swift
  /// Task {
  ///   for await event in store.events() {
  ///     if case .undecodableVersion(let key, let version, _) = event { alert(key, version) }
  ///   }
  /// }
  /// ```
  /// - Returns: A stream of the events after this call.
  public func events() -> AsyncStream<StoreEvent> {
    database.events.stream()
  }
}
