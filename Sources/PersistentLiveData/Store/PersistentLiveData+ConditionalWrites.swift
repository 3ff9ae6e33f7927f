internal import Foundation

extension PersistentLiveData {
  /// Writes `newValue` as the next version only if the key is still at `expected` in the file.
  ///
  /// An edit form reads a value, shows it, and writes the edit later; between the two, another screen,
  /// process or `pld-tool` may have changed it. A plain ``set(_:isolation:)`` would silently overwrite
  /// that change; this refuses it. The condition is checked inside the write transaction against the
  /// version committed in the file — never against memory — so another process's newer version fails it
  /// even before this process has heard of it.
  ///
  /// ```swift
  /// let shown = settings.version          // the version the form shows
  /// // … the user edits …
  /// do {
  ///   try settings.set(edited, ifVersion: shown)
  /// } catch let conflict as VersionConflict {
  ///   reload(conflict.actual)              // changed meanwhile: show the newer value
  /// }
  /// ```
  ///
  /// `ifVersion: 0` creates the key only if it has no version: never written, or removed. Inside
  /// ``PersistentStore/transaction(isolation:_:)`` or ``PersistentStore/write(_:)`` a conflict throws
  /// out of the body, and nothing of it commits.
  ///
  /// - Parameters:
  ///   - newValue: The value to store.
  ///   - expected: The version the key must still be at (0: none).
  ///   - isolation: The caller's isolation, filled in by the compiler.
  /// - Throws: ``/PersistentLiveDataBackend/VersionConflict`` naming the key and both versions when the key
  ///   is at another version; otherwise as ``set(_:isolation:)``. Nothing has changed then, in memory or in
  ///   the file.
  public func set(
    _ newValue: Value, ifVersion expected: Int64, isolation: isolated (any Actor)? = #isolation
  ) throws {
    try database.instrumentation.measure(.set, key: key) {
      let payload = try decoding.encode(newValue, key: key)
      do {
        try write(newValue, payload: payload, expectedVersion: expected, isolation: isolation)
      } catch let stale as StaleWrite {
        throw VersionConflict(key: key, expected: expected, actual: stale.currentVersion)
      }
    }
  }
}
