/// Where `pld-tool serve` reads a store: an SQLite file or a shared store on PostgreSQL.
///
/// ```swift
/// let source: any InspectorSource = try SQLiteInspectorSource(path: "app.db", allowWrites: false)
/// let feed = VersionFeed(keys: try await source.summaries())
/// try await source.watch(publishingTo: feed)  // until cancelled
/// ```
protocol InspectorSource: Sendable {
  /// What the page's header names: the file's path, or the server's URL without its password.
  var storeName: String { get }

  /// What the inspector cannot do with this store, said on standard error and on the page (an SQLite
  /// file whose folder is not writable is not followed live); nil when nothing.
  var limitation: String? { get }

  /// Every key's summary, read from the store.
  func summaries() async throws -> [KeySummary]

  /// The newest `limit` versions of `key`, newest first, and the version stored before the oldest of
  /// them (for its diff) when there is one.
  ///
  /// - Throws: ``InspectorFailure`` (404) for a key that is not stored.
  func history(key: String, limit: Int) async throws -> (versions: [VersionEntry], before: VersionEntry?)

  /// Writes a new version of `key` with the content of `version`, attributed to `pld-tool serve`, and
  /// returns the new version's number — only if the key is still at `expected` when it is given (the
  /// request's `If-Match`).
  ///
  /// - Throws: `VersionConflict` when the key has moved past `expected`; nothing is written then.
  func rollback(key: String, to version: Int64, ifVersion expected: Int64?) async throws -> Int64

  /// Publishes every version any process commits to `feed`, until the task is cancelled.
  func watch(publishingTo feed: VersionFeed) async throws

  /// Closes the store.
  func close() async

  /// The replicas running on a shared store's database (`PostgresStore.replicas()`), as JSON; an SQLite
  /// file has none.
  func replicasJSON() async throws -> JSONValue
}

extension InspectorSource {
  func replicasJSON() async throws -> JSONValue { .array([]) }

  /// The history's JSON: the versions newest first, each with its diff to the version before.
  ///
  /// Also returns the newest version, read with the history (its `ETag`).
  func historyJSON(key: String, limit: Int) async throws -> (json: JSONValue, latest: Int64) {
    let (versions, before) = try await history(key: key, limit: limit)
    var elements: [JSONValue] = []
    for (index, entry) in versions.enumerated() {
      let previous = index + 1 < versions.count ? versions[index + 1] : before
      elements.append(entry.json(previous: previous))
    }
    return (.array(elements), versions.first?.version ?? 0)
  }
}
