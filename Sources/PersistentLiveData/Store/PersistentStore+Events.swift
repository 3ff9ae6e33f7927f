extension PersistentStore {
  /// The events of this store from now on, for apps that want to act on what would otherwise reach only
  /// a logger: a version written elsewhere that a live value cannot decode, a live value that started
  /// without its newest version, a version a history left out, a damaged page a read met
  /// (``/PersistentLiveDataBackend/StoreEvent``). They are logged to ``StoreOptions/logger`` as well.
  ///
  /// Each call returns a new stream; every stream gets every event, and keeps the newest 256 its reader
  /// has not taken yet. The streams finish when the store closes.
  ///
  /// ```swift
  /// let watcher = Task {
  ///   for await event in store.events() {
  ///     if case .undecodableVersion(let key, let version, let error) = event {
  ///       alert("\(key) v\(version) cannot be read by this build: \(error)")
  ///     }
  ///   }
  /// }
  /// ```
  /// - Returns: A stream of the events after this call.
  public func events() -> AsyncStream<StoreEvent> {
    database.events.stream()
  }
}
