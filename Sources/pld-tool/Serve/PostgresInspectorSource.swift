#if canImport(PersistentLiveDataPostgres)
import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO
import Synchronization

/// A shared store on PostgreSQL as the inspector sees it: its rows as they are on the server, never
/// decoded into a type, so that every stored version of any value schema is listed and shown with its
/// schema version — as the SQLite source reads its file's rows. The keys are listed as of one server
/// snapshot, and what commits after it — by any replica, each version once — comes through the store's
/// LISTEN/NOTIFY and catch-up (`PostgresStore.rowChanges(after:)`). Reads write nothing; rollbacks (with
/// `--allow-writes`) write the old row's text and schema version as the next version.
///
/// ```swift
/// let source = try await PostgresInspectorSource(
///   url: "postgres://app@db.local/app?sslmode=verify-full&sslrootcert=ca.pem", allowWrites: false, console: .current)
/// ```
final class PostgresInspectorSource: InspectorSource {
  private let client: PostgresClient
  private let store: PostgresStore
  private let services: Task<Void, Never>
  /// The snapshot the keys were last listed as of: the changes are followed from there.
  private let listedAsOf = Mutex<String?>(nil)

  /// Where it reads, without the password: the page's header names it.
  let storeName: String
  let limitation: String? = nil

  /// Connects to the server `url` names, once, before serving (so that a URL or TLS setting that cannot
  /// work is said at once, with the rule that refused the server), then runs a store on it.
  ///
  /// - Throws: ``CommandError`` for a URL that is not `postgres://…`, or a server that cannot be reached
  ///   or is refused; never with the password.
  init(url text: String, allowWrites: Bool, console: Console) async throws {
    let url: PostgresURL
    do {
      url = try PostgresURL(text)
      let encrypted = try await url.probe()
      console.writeError(
        "pld-tool serve: \(url.redacted), \(encrypted ? "encrypted (TLS)" : "not encrypted")")
      client = PostgresClient(configuration: try url.configuration())
    } catch let error as PostgresURLError {
      throw CommandError("--postgres: \(error.description)")
    }
    storeName = url.redacted
    store = PostgresStore(client: client)
    services = Task { [client, store] in
      await withDiscardingTaskGroup { group in
        group.addTask { await client.run() }
        group.addTask { try? await store.run() }
      }
    }
  }

  func replicasJSON() async throws -> JSONValue {
    .array(try await store.replicas().map(\.json))
  }

  func summaries() async throws -> [KeySummary] {
    let snapshot = try await store.currentSnapshot()
    let rows = try await store.latestRows(asOf: snapshot)
    let counts = try await store.versionCounts(of: nil)
    listedAsOf.withLock { $0 = snapshot }
    return rows.map { Self.summary($0, versions: counts[$0.key]) }
  }

  func history(key: String, limit: Int) async throws -> (versions: [VersionEntry], before: VersionEntry?) {
    let rows = try await store.rows(of: key, limit: limit + 1)
    guard !rows.isEmpty else { throw InspectorFailure(status: 404, message: "No key \(key) is stored.") }
    let entries = rows.map(VersionEntry.init)
    return (Array(entries.prefix(limit)), entries.count > limit ? entries[limit] : nil)
  }

  func rollback(key: String, to version: Int64, ifVersion expected: Int64?) async throws -> Int64 {
    do {
      return try await ServeAttribution.recording {
        try await store.rollbackRow(key: key, to: version, ifVersion: expected)
      }
    } catch PersistentLiveDataError.unknownVersion {
      throw InspectorFailure(status: 404, message: "Key \(key) has no version \(version).")
    }
  }

  func watch(publishingTo feed: VersionFeed) async throws {
    var snapshot = listedAsOf.withLock { $0 }
    if snapshot == nil { snapshot = try await store.currentSnapshot() }
    guard let snapshot else { return }
    var changes = store.rowChanges(after: snapshot).makeAsyncIterator()
    while let change = try await changes.next() {
      switch change {
      case .written(let row, _):
        let count = try await store.versionCounts(of: [row.key])[row.key]
        let summary = Self.summary(row, versions: count)
        feed.publish([
          VersionEvent(
            key: row.key, version: row.version, writtenAtMilliseconds: row.writtenAtMilliseconds,
            summary: summary)
        ])
      case .removed(let key, _, _):
        feed.publish([], removed: [key])
      }
    }
  }

  func close() async {
    services.cancel()
    await services.value
  }

  /// A key's summary from its newest row. The shared store records no per-key retention (each replica
  /// applies its own `PostgresStoreOptions.retention`): `retention` is null.
  private static func summary(_ row: StoredRow, versions: Int?) -> KeySummary {
    KeySummary(
      key: row.key, version: row.version, writtenAtMilliseconds: row.writtenAtMilliseconds,
      schemaVersion: row.schemaVersion, versions: versions, retention: .null,
      attribution: ServeAttribution.of(row))
  }
}
#endif
