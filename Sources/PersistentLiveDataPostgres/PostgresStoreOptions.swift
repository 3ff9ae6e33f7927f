public import Logging
public import PersistentLiveDataBackend

/// How a ``PostgresStore`` keeps history, handles rows it cannot decode, and talks to its server.
///
/// ```swift
/// let store = PostgresStore(
///   client: client,
///   options: PostgresStoreOptions(retention: .last(100), onUndecodable: .lastDecodable, logger: logger))
/// ```
public struct PostgresStoreOptions: Sendable {
  /// How many versions of each key are kept; never fewer than the latest. Default `.all`.
  public var retention: HistoryRetention
  /// What a replica does with a stored value it cannot decode (written by a newer type, say). None of the
  /// policies deletes or rewrites a row. Default `.throwError`.
  public var onUndecodable: DecodeFailurePolicy
  /// Where the store reports reconnects, catch-ups and values that do not decode; nil for silence.
  public var logger: Logger?
  /// The longest a call to the server may take before it throws
  /// ``SharedStoreError/timedOut(operation:after:)``; a caller is never stuck behind a server that stopped
  /// answering. Default 10 seconds.
  public var operationTimeout: Duration = .seconds(10)
  /// How often ``PostgresStore/run()`` asks the server which keys changed since its last look, even when no
  /// notification came — the safety net for a connection that died without telling and for a notification
  /// its writer never sent (it died after the commit). Default 1 second.
  public var catchUpInterval: Duration = .seconds(1)
  /// The shortest and longest wait between attempts to listen again after the connection was lost.
  /// Defaults 10 ms and 2 seconds.
  public var reconnectDelay: ClosedRange<Duration> = .milliseconds(10) ... .seconds(2)
  /// Whether the spans of write calls carry the key itself (attribute `pld.key`). Default `false`: keys
  /// may be personal data. The spans always carry `pld.key.hash` (see the metrics and traces article of
  /// PersistentLiveData).
  ///
  /// ```swift
  /// var options = PostgresStoreOptions()
  /// options.tracesKeys = true
  /// ```
  public var tracesKeys: Bool = false
  /// Path of an SQLite store file (created if missing) where this replica keeps the latest committed
  /// version it has seen of every key it opened. nil (the default): no cache, as before.
  ///
  /// With a cache, ``PostgresStore/liveData(_:default:)`` of a key the file holds answers at once from it
  /// when the server does not answer within a few milliseconds — stopped, halted, or not answering at its
  /// address — with ``SharedLiveData/isStale`` true until the server confirms the key. Writes still go to
  /// the server only, and throw while it is away. The file is an ordinary store file of this library
  /// (`pld-tool keys`, `get` and `history` read it), under the server's version numbers. One that cannot
  /// be used is set aside (`StoreEvent.localCacheSetAside(path:reason:)`) and the store works without.
  /// Give each replica a file of its own. See the article "Serving while the server is away".
  ///
  /// ```swift
  /// var options = PostgresStoreOptions()
  /// options.localCachePath = "/var/lib/checkout/shared-cache.sqlite"
  /// ```
  public var localCachePath: String?
  /// Whether writes, and the statements that notify other replicas of them, run as prepared statements,
  /// each prepared once per connection. Default true.
  ///
  /// A prepared write is parsed and planned once per connection instead of at every write: with
  /// replicas writing at once on a durable server, that halved the server's CPU per write. Set it to
  /// false behind a connection pooler that hands each transaction to any server connection and does
  /// not track prepared statements (PgBouncer before 1.21 in transaction mode, or without
  /// `max_prepared_statements`): writes then go as plain queries, as before.
  ///
  /// ```swift
  /// var options = PostgresStoreOptions()
  /// options.preparesStatements = false  // behind PgBouncer 1.20 in transaction mode
  /// ```
  public var preparesStatements: Bool = true

  /// Options with the given retention, decode-failure policy and logger.
  ///
  /// ```swift
  /// let options = PostgresStoreOptions(retention: .last(50))
  /// ```
  public init(
    retention: HistoryRetention = .all, onUndecodable: DecodeFailurePolicy = .throwError,
    logger: Logger? = nil
  ) {
    self.retention = retention
    self.onUndecodable = onUndecodable
    self.logger = logger
  }
}
