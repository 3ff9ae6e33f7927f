internal import Foundation

extension PersistentStore {
  /// Runs `body` on the store's writer and commits it; the caller suspends without blocking its thread.
  ///
  /// Calls that arrive together share one transaction and one sync (group commit): under
  /// ``Durability/full`` sixteen concurrent writers pay for one `fsync` instead of sixteen. Each call's
  /// writes — the `set`s and `update`s inside `body`, as in ``transaction(isolation:_:)`` — commit or fail
  /// as a unit, in a savepoint of their own.
  ///
  /// ```swift
  /// try await store.write {
  ///   try from.update { $0 -= 10 }
  ///   try to.update { $0 += 10 }
  /// }
  /// print(to.value, to.version)   // memory has moved once write returns (not yet inside the body)
  /// ```
  ///
  /// As the whole body of a `Void` task group's `addTask`, discard a returned value with `_ =` (without
  /// it Swift reports an ambiguous use of `addTask`):
  ///
  /// ```swift
  /// try await withThrowingTaskGroup(of: Void.self) { group in
  ///   for _ in 0..<16 {
  ///     group.addTask { _ = try await store.write { try counter.update { $0 += 1 } } }
  ///   }
  ///   try await group.waitForAll()
  /// }
  /// ```
  ///
  /// When it returns, the writes are as durable as the store's ``Durability`` promises,
  /// ``/PersistentLiveDataCore/LiveData/value`` and ``/PersistentLiveDataCore/LiveData/version`` have
  /// changed, and observers are notified as for a `set` made off the main actor (one main-actor delivery,
  /// coalescing). Calls commit in the order the writer takes them; versions stay gap-free per key.
  ///
  /// - Parameter body: The writes; it runs on the store's writer thread, under the store's lock, so it
  ///   must be short and must not wait for other tasks. Its result is returned to the caller.
  /// - Returns: What `body` returned.
  /// - Throws: What `body` throws — its own writes are then undone while the rest of its group commits — or a
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError`` when the group's commit fails (nothing of the
  ///   group is written; also when one call's writes meet a damaged page or a full disk, which end the whole
  ///   transaction), ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` after
  ///   ``close()``, or `CancellationError` when the calling task was cancelled before the writer took the
  ///   call (it then writes nothing; a call already taken commits with its group).
  @discardableResult
  public func write<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await database.instrumentation.measure(.write, key: nil) { try await database.write(body) }
  }
}

extension PersistentLiveData {
  /// Writes `newValue` as the next version through the store's group commit: `try await store.write {
  /// try self.set(newValue) }`.
  ///
  /// ```swift
  /// try await settings.write(Settings(theme: "dark", fontSize: 16))
  /// ```
  /// - Parameter newValue: The value to store.
  /// - Throws: As ``PersistentStore/write(_:)``; nothing has changed then.
  public func write(_ newValue: Value) async throws {
    try await database.instrumentation.measure(.write, key: key) {
      let payload = try await Self.encode(newValue, key: key, decoding: decoding)
      // Prepared here, carried down to the writer: the writer inserts it and never calls back up into
      // this live value (only its apply phase moves memory, under the lock, after the commit).
      try await database.write(
        try pendingWrite(newValue, payload: payload, expectedVersion: nil, onMainActor: false))
    }
  }

  /// Encodes off the caller's actor (a nonisolated async function runs on the global executor) and off
  /// the store's writer, whose serial time bounds the throughput of a group commit: sixteen callers
  /// encode in parallel while the writer waits for the disk. Encoding is user code (`encode(to:)`); it
  /// never runs under the store's lock.
  private nonisolated static func encode(
    _ value: Value, key: String, decoding: StoredValueDecoding<Value>
  ) async throws -> Data {
    try decoding.encode(value, key: key)
  }
}
