public import Logging
public import PersistentLiveData

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
  /// The longest a call to the server may take before it throws ``SharedStoreError/timedOut(operation:after:)``;
  /// a caller is never stuck behind a server that stopped answering. Default 10 seconds.
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
