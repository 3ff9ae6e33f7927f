#if canImport(PersistentLiveDataPostgres)
import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO
import Synchronization

/// A shared store on PostgreSQL as the inspector sees it, through the library: every key's
/// `SharedLiveData` (values read as ``AnyJSON``), live through the store's LISTEN/NOTIFY and catch-up
/// (`changes(since:)`, every version once, in order), new keys found by asking for the keys every
/// ``keyInterval``. Reads write nothing; rollbacks (with `--allow-writes`) go through
/// `SharedLiveData.rollback(to:)`.
///
/// ```swift
/// let source = try PostgresInspectorSource(url: "postgres://app@db.local/app", allowWrites: false)
/// ```
final class PostgresInspectorSource: InspectorSource {
  /// How often the keys are listed, to find keys that other replicas created.
  static let keyInterval: Duration = .seconds(1)

  private let client: PostgresClient
  private let store: PostgresStore
  private let services: Task<Void, Never>
  private let live = Mutex<[StoreKey: SharedLiveData<AnyJSON>]>([:])

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
    var summaries: [KeySummary] = []
    for key in try await store.keys() {
      let data = try await liveData(key)
      if let latest = try await data.history(limit: 1).first { summaries.append(Self.summary(key, latest)) }
    }
    return summaries
  }

  func history(key: String, limit: Int) async throws -> (versions: [VersionEntry], before: VersionEntry?) {
    guard try await store.keys().contains(where: { StoreKey.same($0, key) }) else {
      throw InspectorFailure(status: 404, message: "No key \(key) is stored.")
    }
    let entries = try await liveData(key).history(limit: limit + 1).map { versioned in
      var entry = VersionEntry(
        key: key, version: versioned.version, writtenAtMilliseconds: Self.milliseconds(versioned.writtenAt),
        value: versioned.value.json)
      entry.attribution = ServeAttribution.of(versioned)
      return entry
    }
    return (Array(entries.prefix(limit)), entries.count > limit ? entries[limit] : nil)
  }

  func rollback(key: String, to version: Int64, ifVersion expected: Int64?) async throws -> Int64 {
    let data = try await liveData(key)
    guard try await data.value(at: version) != nil else {
      throw InspectorFailure(status: 404, message: "Key \(key) has no version \(version).")
    }
    try await ServeAttribution.recording {
      if let expected {
        try await data.rollback(to: version, ifVersion: expected)
      } else {
        try await data.rollback(to: version)
      }
    }
    return try await data.history(limit: 1).first?.version ?? 0
  }

  func watch(publishingTo feed: VersionFeed) async throws {
    try await withThrowingDiscardingTaskGroup { group in
      var watched: Set<StoreKey> = []
      while !Task.isCancelled {
        let known = feed.versions()
        for key in try await store.keys() where watched.insert(StoreKey(key)).inserted {
          let data = try await liveData(key)
          group.addTask {
            for try await versioned in data.changes(since: known[StoreKey(key)] ?? 0) {
              let summary = Self.summary(key, versioned)
              feed.publish([
                VersionEvent(
                  key: key, version: versioned.version, writtenAtMilliseconds: summary.writtenAtMilliseconds,
                  summary: summary)
              ])
            }
          }
        }
        try await Task.sleep(for: Self.keyInterval)
      }
    }
  }

  func close() async {
    services.cancel()
    await services.value
  }

  private func liveData(_ key: String) async throws -> SharedLiveData<AnyJSON> {
    if let data = live.withLock({ $0[StoreKey(key)] }) { return data }
    let data = try await store.liveData(key, default: AnyJSON(.null))
    live.withLock { $0[StoreKey(key)] = data }
    return data
  }

  private static func summary(_ key: String, _ versioned: Versioned<AnyJSON>) -> KeySummary {
    KeySummary(
      key: key, version: versioned.version, writtenAtMilliseconds: milliseconds(versioned.writtenAt),
      schemaVersion: nil, versions: nil, retention: .null, attribution: ServeAttribution.of(versioned))
  }

  private static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1_000).rounded())
  }
}
#endif
