/// What to do when a stored value no longer decodes as the requested `Value` type (for example after a
/// change of the type), or was written by a newer schema of the type than the running one
/// (``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``). None of the policies
/// deletes or rewrites a stored row.
///
/// ```swift
/// StoreOptions(onUndecodable: .lastDecodable)
/// ```
public enum DecodeFailurePolicy: Sendable {
  /// `PersistentStore/liveData(_:default:)` throws
  /// ``PersistentLiveDataError/undecodable(key:version:reason:)`` (or
  /// ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``).
  ///
  /// The default: nothing starts until the type can read the stored value again.
  ///
  /// ```swift
  /// do {
  ///   settings = try store.liveData("settings", default: Settings())
  /// } catch PersistentLiveDataError.undecodable(let key, let version, let reason) {
  ///   report("\(key) v\(version): \(reason)")
  /// }
  /// ```
  case throwError
  /// Start from the default value; the stored rows stay as they are and the next `set` writes the next
  /// version.
  ///
  /// The live value's ``/PersistentLiveDataCore/LiveData/version`` is still the newest stored version, so the
  /// next `set` writes the version after it.
  ///
  /// ```swift
  /// let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
  /// ```
  case useDefault
  /// Start from the newest version that still decodes (or the default if none does).
  ///
  /// The live value's ``/PersistentLiveDataCore/LiveData/version`` is still the newest stored version, so the
  /// next `set` writes the version after it.
  ///
  /// ```swift
  /// let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
  /// ```
  case lastDecodable
}
