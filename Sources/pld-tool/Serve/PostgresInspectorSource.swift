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
/// let source = try PostgresInspectorSource(url: "postgres://app@db.local/app", allowWrites: false)
/// ```
final class PostgresInspectorSource: InspectorSource {
  private let client: PostgresClient
  private let store: PostgresStore
  private let services: Task<Void, Never>
  /// The snapshot the keys were last listed as of: the changes are followed from there.
  private let listedAsOf = Mutex<String?>(nil)

  /// Connects to the server `url` names (nothing is sent before the first read).
  ///
  /// - Throws: ``CommandError`` for a URL that is not `postgres://…`.
  init(url: String, allowWrites: Bool) throws {
    client = PostgresClient(configuration: try Self.configuration(url))
    store = PostgresStore(client: client)
    services = Task { [client, store] in
      await withDiscardingTaskGroup { group in
        group.addTask { await client.run() }
        group.addTask { try? await store.run() }
      }
    }
  }

  /// Where `--postgres` points: a host and port, or a Unix socket.
  struct Endpoint: Equatable {
    var host: String?
    var port: Int
    var socketPath: String? = nil
    var user: String
    var password: String? = nil
    var database: String? = nil
  }

  /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or `?host=FOLDER[&port=PORT]` for the Unix socket
  /// `FOLDER/.s.PGSQL.PORT`.
  ///
  /// - Throws: ``CommandError`` for a URL that is not `postgres://USER…`.
  static func endpoint(_ text: String) throws -> Endpoint {
    guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
      let user = url.user, !user.isEmpty
    else {
      throw CommandError(
        "--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or postgres://USER@/DATABASE?host=SOCKET-FOLDER, got \(TerminalText.quoted(text))."
      )
    }
    let database = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    let items = url.queryItems ?? []
    let socketFolder = items.first { $0.name == "host" }?.value
    let port = url.port ?? items.first { $0.name == "port" }?.value.flatMap { Int($0) } ?? 5432
    let socketPath = socketFolder.flatMap { $0.hasPrefix("/") ? "\($0)/.s.PGSQL.\(port)" : nil }
    return Endpoint(
      host: socketPath == nil ? (url.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost") : nil, port: port,
      socketPath: socketPath, user: user, password: url.password, database: database.isEmpty ? nil : database)
  }

  /// The client's configuration for `text` (see ``endpoint(_:)``), without TLS.
  static func configuration(_ text: String) throws -> PostgresClient.Configuration {
    let endpoint = try endpoint(text)
    if let socketPath = endpoint.socketPath {
      return .init(
        unixSocketPath: socketPath, username: endpoint.user, password: endpoint.password,
        database: endpoint.database)
    }
    return .init(
      host: endpoint.host ?? "localhost", port: endpoint.port, username: endpoint.user,
      password: endpoint.password,
      database: endpoint.database, tls: .disable)
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
