package import CoreMetrics

/// The storage a store keeps its versions in, as metrics and traces name it (the `backend` dimension and
/// the `db.system.name` attribute).
package enum StoreBackend: String, Sendable {
  case sqlite
  case postgresql

  /// The write calls this backend has.
  var operations: [WriteOperation] {
    switch self {
    case .sqlite: WriteOperation.allCases
    case .postgresql: [.set, .update, .rollback, .transaction]
    }
  }
}

/// The write calls a store measures: the `operation` dimension of `pld.write.duration` and
/// `pld.write.errors`, and the span names `pld.set`, `pld.update` …
package enum WriteOperation: Int, CaseIterable, Sendable {
  case set, update, rollback, reset, write, transaction

  /// The `operation` dimension.
  package var name: String {
    switch self {
    case .set: "set"
    case .update: "update"
    case .rollback: "rollback"
    case .reset: "reset"
    case .write: "write"
    case .transaction: "transaction"
    }
  }

  /// The name of the call's span.
  var spanName: String { "pld." + name }
}

/// The metric handles of one store (the MetricsAndTraces article), created once when the store opens: a call
/// records into them without looking anything up. Only made when a metrics backend is bootstrapped (or bound
/// with `withMetricsFactory`) where the store is created; without one the store has none and measures
/// nothing.
///
/// ```swift
/// let metrics = StoreMetrics(backend: .sqlite, factory: MetricsSystem.factory)
/// metrics.updateRetries.increment()
/// ```
package final class StoreMetrics: Sendable {
  /// `pld.write.duration` by operation (index: ``WriteOperation/rawValue``; nil for an operation the
  /// backend does not have, so that no empty series is shown for it).
  let writeDurations: [Timer?]
  /// `pld.write.errors` by operation.
  let writeErrors: [Counter?]
  /// `pld.commit.duration`: each SQLite `COMMIT`, its sync included (SQLite only).
  let commitDuration: Timer?
  /// `pld.group_commit.size`: writes per group-commit transaction (SQLite only).
  let groupCommitSize: Recorder?
  /// `pld.update.retries`: an `update` transform run again after a conflict.
  let updateRetries: Counter
  /// `pld.versions.received`: versions learned from another process or replica.
  let versionsReceived: Counter
  /// `pld.delivery.delay`: from the other writer's commit (`writtenAt`) to this process's observers.
  let deliveryDelay: Timer
  /// `pld.undecodable`: a stored version that did not decode.
  package let undecodable: Counter
  /// `pld.postgres.reconnects`: the listener connected again after losing its connection (PostgreSQL only).
  package let reconnects: Counter?
  /// `pld.postgres.reachable`: 1 when the last attempt to reach the server succeeded, else 0 (PostgreSQL
  /// only).
  package let reachable: Gauge?

  package init(backend: StoreBackend, factory: any MetricsFactory) {
    let byBackend = [("backend", backend.rawValue)]
    let operations = backend.operations
    writeDurations = WriteOperation.allCases.map { operation in
      guard operations.contains(operation) else { return nil }
      return Timer(
        label: "pld.write.duration", dimensions: byBackend + [("operation", operation.name)], factory: factory
      )
    }
    writeErrors = WriteOperation.allCases.map { operation in
      guard operations.contains(operation) else { return nil }
      return Counter(
        label: "pld.write.errors", dimensions: byBackend + [("operation", operation.name)], factory: factory)
    }
    updateRetries = Counter(label: "pld.update.retries", dimensions: byBackend, factory: factory)
    versionsReceived = Counter(label: "pld.versions.received", dimensions: byBackend, factory: factory)
    deliveryDelay = Timer(label: "pld.delivery.delay", dimensions: byBackend, factory: factory)
    undecodable = Counter(label: "pld.undecodable", dimensions: byBackend, factory: factory)
    switch backend {
    case .sqlite:
      commitDuration = Timer(label: "pld.commit.duration", dimensions: byBackend, factory: factory)
      groupCommitSize = Recorder(label: "pld.group_commit.size", dimensions: [], factory: factory)
      reconnects = nil
      reachable = nil
    case .postgresql:
      commitDuration = nil
      groupCommitSize = nil
      reconnects = Counter(label: "pld.postgres.reconnects", dimensions: [], factory: factory)
      reachable = Gauge(label: "pld.postgres.reachable", dimensions: [], factory: factory)
    }
  }

  /// Records a call that returned after `nanoseconds`.
  func recordSuccess(_ operation: WriteOperation, nanoseconds: Int64) {
    writeDurations[operation.rawValue]?.recordNanoseconds(nanoseconds)
  }

  /// Counts a call that threw.
  func recordFailure(_ operation: WriteOperation) {
    writeErrors[operation.rawValue]?.increment()
  }
}
