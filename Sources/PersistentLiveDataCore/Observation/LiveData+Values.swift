extension LiveData {
  /// The value as an async sequence: the current value (if initialized), then the latest value after
  /// each change.
  ///
  /// The sequence is not tied to the main actor, so servers, daemons and command-line tools can consume
  /// changes on any executor. A slow consumer skips intermediate values and always gets the newest one.
  /// The sequence ends when the consuming task is cancelled or the LiveData is released. A store's live
  /// value (`PersistentLiveData` and the shared store's) is kept alive by a running consumer, so
  /// `for await v in try store.liveData("k", default: 0).values` needs no other reference to it.
  ///
  /// ```swift
  /// Task {
  ///   for await settings in store.settings.values {
  ///     await server.reconfigure(settings)
  ///   }
  /// }
  /// ```
  public var values: AsyncStream<Value> {
    AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
      let id = storage.withLock { storage -> UInt64 in
        storage.nextContinuationID += 1
        return storage.nextContinuationID
      }
      // Held by the stream until it terminates (cancelled, or the stream and its iterator dropped).
      let keptAlive: LiveData? = self is any SelfHoldingLiveData ? self : nil
      continuation.onTermination = { [weak self] _ in
        withExtendedLifetime(keptAlive) {
          _ = self?.storage.withLock { $0.continuations.removeValue(forKey: id) }
        }
      }
      storage.withLock { storage in
        if storage.version >= 0 { continuation.yield(storage.value) }
        storage.continuations[id] = continuation
      }
    }
  }
}
