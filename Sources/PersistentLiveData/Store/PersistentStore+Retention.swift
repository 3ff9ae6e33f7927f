extension PersistentStore {
  /// The live value stored under `key`, with a retention of its own that the file remembers.
  ///
  /// The retention is recorded in the store file, so it overrides ``StoreOptions/retention`` for this
  /// key in every process that writes the key, in later runs that ask for the key without a retention,
  /// and in `pld-tool prune`. A heartbeat that keeps its last 100 versions and feature flags that keep
  /// every version can share one store:
  ///
  /// ```swift
  /// let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(100)))
  /// let heartbeat = try store.liveData("heartbeat", default: 0)                       // last 100
  /// let flags = try store.liveData("flags", default: [String: Bool](), retention: .all)  // every version
  /// ```
  ///
  /// Asking with a different retention later records the new one; versions it no longer keeps stop being
  /// visible at once and are deleted by the key's next writes. ``removeKey(_:)`` leaves the recorded
  /// retention in place for when the key is written again.
  ///
  /// - Parameters:
  ///   - key: Any non-empty string up to 1 MiB of UTF-8, NUL bytes included.
  ///   - defaultValue: The value while nothing has been written.
  ///   - retention: How many versions of this key the file keeps.
  /// - Returns: The live value of `key`, as ``liveData(_:default:)`` returns it.
  /// - Throws: What ``liveData(_:default:)`` throws, or
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/readOnly(path:)`` when a store opened with
  ///   ``StoreOptions/readOnly`` would have to record a different retention.
  public func liveData<Value: Codable & Sendable>(
    _ key: String, default defaultValue: Value, retention: HistoryRetention
  ) throws -> PersistentLiveData<Value> {
    try StoreKey.validate(key)
    try database.recordRetention(retention, key: key)
    return try liveData(key, default: defaultValue)
  }

  /// The retention recorded for `key` by ``liveData(_:default:retention:)``, or nil when the key
  /// follows ``StoreOptions/retention``.
  ///
  /// ```swift
  /// _ = try store.liveData("flags", default: [String: Bool](), retention: .all)
  /// try store.recordedRetention(of: "flags")   // .all
  /// ```
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error.
  public func recordedRetention(of key: String) throws -> HistoryRetention? {
    try database.recordedRetention(key: key)
  }
}
