extension PersistentLiveData {
  /// Every version after `version`, oldest first: first those already stored, then each one committed
  /// later by this process or by any other, each exactly once and with no gap.
  ///
  /// Unlike observers and ``/PersistentLiveDataCore/LiveData/values``, which coalesce to the latest value,
  /// this delivers every version — for audit logs, undo stacks, syncing to another system, or any consumer
  /// that must act on each change. Nonisolated: no main actor needed. To resume after a restart, remember the
  /// last version handled and pass it as `version`.
  ///
  /// ```swift
  /// let settings = try store.liveData("settings", default: Settings())
  /// let auditor = Task {
  ///   for try await change in settings.changes(since: lastAudited) {
  ///     try audit.record(version: change.version, value: change.value, at: change.writtenAt)
  ///   }
  /// }
  /// ```
  ///
  /// Versions committed by other processes arrive when the store notices them (see
  /// ``StoreOptions/externalChangePollInterval``); with that check turned off, only this process's
  /// commits are seen live. The sequence reads the store page by page as it is consumed, so a slow
  /// consumer holds no growing buffer. It keeps the store's file open while it runs.
  ///
  /// The sequence finishes when the consuming task is cancelled or the store is closed. It throws, after
  /// every version before the problem:
  /// - ``/PersistentLiveDataBackend/PersistentLiveDataError/changesPruned(key:since:oldestKept:)`` when
  ///   versions it still had to deliver were pruned by retention or taken by
  ///   ``PersistentStore/removeKey(_:)``: start again from ``history(limit:)``;
  /// - ``/PersistentLiveDataBackend/PersistentLiveDataError/unknownVersion(key:version:)`` at once when
  ///   `version` is newer than any version of the key the store holds — a position saved from another file,
  ///   or from this one before it was restored from an older backup: versions would be skipped otherwise;
  /// - ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` for a version
  ///   this type cannot decode (again at every call from the same position): read it with
  ///   ``historyEntry(at:)``, which never throws for a value, handle it, and call `changes(since:)` again
  ///   with its version to resume after it;
  /// - a storage error.
  ///
  /// - Parameter version: The last version already handled; 0 replays every version still kept (from
  ///   the oldest one retention or a removal left, without an error for those before it).
  /// - Returns: The versions after `version`, in order, without end.
  public func changes(since version: Int64) -> AsyncThrowingStream<Versioned<Value>, any Error> {
    let database = database
    let key = key
    let reader = ChangeReader(
      decoding: decoding, after: version, signal: database.changeSignal,
      newestVersion: { try database.newestVersion(key: key) }
    ) { after, limit in
      do {
        return try database.rows(key: key, after: after, limit: limit)
      } catch PersistentLiveDataError.storeClosed {
        return nil
      }
    }
    // The stream holds the live value while it is consumed (as `values` does).
    return AsyncThrowingStream(unfolding: { [self] in
      _ = self
      return try await reader.next()
    })
  }
}
