import PersistentLiveDataBackend

extension SharedLiveData {
  /// Writes `newValue` as the key's next version only if the key is still at `expected` on the server.
  ///
  /// The condition is part of the write's own statement (no extra round trip): another replica's newer
  /// version fails it even before this replica has heard of it. An edit form, a settings page or an
  /// admin API that shows a value and writes the edit later uses it so as never to overwrite a change
  /// made meanwhile.
  ///
  /// ```swift
  /// let shown = flags.version
  /// // … the operator edits …
  /// do {
  ///   try await flags.set(edited, ifVersion: shown)
  /// } catch let conflict as VersionConflict {
  ///   // another replica wrote conflict.actual meanwhile: show it and let the operator decide
  /// }
  /// ```
  ///
  /// `ifVersion: 0` creates the key only if it was never written.
  ///
  /// - Parameters:
  ///   - newValue: The value to store.
  ///   - expected: The version the key must still be at (0: none).
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: `VersionConflict` naming the key and both versions; otherwise as
  ///   ``set(_:isolation:)``. Nothing has changed then, in memory or on the server.
  public func set(
    _ newValue: Value, ifVersion expected: Int64, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await database.instrumentation.measure(.set, key: key) {
      try await set(newValue, ifVersion: expected, isolation)
    }
  }

  /// The body of ``set(_:ifVersion:isolation:)``.
  private func set(
    _ newValue: Value, ifVersion expected: Int64, _ isolation: isolated (any Actor)?
  )
    async throws
  {
    var write = try write(
      String(decoding: try decoding.encode(newValue, key: key), as: UTF8.self), staged: newValue)
    write.expectedVersion = expected
    guard let committed = try await database.commit([write], operation: "set")?.first else {
      throw VersionConflict(key: key, expected: expected, actual: try await database.headVersion(of: key))
    }
    apply(newValue, write: write, committed: committed, onMainActor: isolation === MainActor.shared)
  }

  /// ``rollback(to:isolation:)`` only if the key is still at `expected` (the inspector's `If-Match`).
  ///
  /// ```swift
  /// try await data.rollback(to: 3, ifVersion: versionShownOnThePage)
  /// ```
  /// - Throws: `VersionConflict` when the key has moved on; otherwise as ``rollback(to:isolation:)``.
  package func rollback(
    to version: Int64, ifVersion expected: Int64, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await database.instrumentation.measure(.rollback, key: key) {
      guard let row = try await database.row(key: key, version: version) else {
        throw PersistentLiveDataError.unknownVersion(key: key, version: version)
      }
      let (restored, payload) = try rollbackWrite(of: row)
      var write = try write(String(decoding: payload, as: UTF8.self), staged: restored)
      write.expectedVersion = expected
      guard let committed = try await database.commit([write], operation: "rollback")?.first else {
        throw VersionConflict(key: key, expected: expected, actual: try await database.headVersion(of: key))
      }
      apply(restored, write: write, committed: committed, onMainActor: isolation === MainActor.shared)
    }
  }
}
