internal import CoreMetrics
internal import Dispatch
internal import Foundation
internal import Tracing

/// What one store reports to swift-metrics and swift-distributed-tracing (the MetricsAndTraces article): the
/// duration or the failure of every write call, its span, and the metrics the engine records below the calls.
///
/// The metrics factory and the tracer are the ones in effect where the store is created
/// (`MetricsSystem.factory`, `InstrumentationSystem.tracer`, a `withMetricsFactory` or `withTracer`
/// scope included), read once. When neither is bootstrapped, ``measure(_:key:_:)`` calls its body and
/// nothing else: no clock read, no span, no key hashing.
///
/// ```swift
/// let instrumentation = StoreInstrumentation(backend: .sqlite, tracesKeys: false)
/// try instrumentation.measure(.set, key: "theme") { try commitTheWrite() }
/// instrumentation.metrics?.updateRetries.increment()
/// ```
package final class StoreInstrumentation: Sendable {
  package let backend: StoreBackend
  /// Whether spans carry the key itself (`pld.key`), besides its hash.
  package let tracesKeys: Bool
  /// The metric handles; nil without a metrics backend.
  package let metrics: StoreMetrics?
  /// The tracer; nil without one (`NoOpTracer`).
  let tracer: (any Tracer)?
  /// Whether a call is measured or traced at all.
  private let isActive: Bool

  package init(backend: StoreBackend, tracesKeys: Bool) {
    self.backend = backend
    self.tracesKeys = tracesKeys
    let factory = MetricsSystem.factory
    metrics = factory is NOOPMetricsHandler ? nil : StoreMetrics(backend: backend, factory: factory)
    let tracer = InstrumentationSystem.tracer
    self.tracer = tracer is NoOpTracer ? nil : tracer
    isActive = metrics != nil || self.tracer != nil
  }

  /// Runs one write call: times it into `pld.write.duration` when it returns, counts it in
  /// `pld.write.errors` when it throws, and wraps it in a span `pld.<operation>` (a child of the
  /// caller's `ServiceContext`, the current one while `body` runs).
  ///
  /// - Parameters:
  ///   - operation: The call.
  ///   - key: The key it writes; nil for a call that may write several (a transaction).
  ///   - body: The call itself.
  package func measure<T>(_ operation: WriteOperation, key: String?, _ body: () throws -> T) rethrows -> T {
    guard isActive else { return try body() }
    let started = metrics == nil ? 0 : DispatchTime.now().uptimeNanoseconds
    let span = tracer.map { startSpan(operation, key: key, tracer: $0) }
    do {
      let result: T
      if let span {
        result = try ServiceContext.$current.withValue(span.context) { try body() }
      } else {
        result = try body()
      }
      finish(operation, span: span, started: started, error: nil)
      return result
    } catch {
      finish(operation, span: span, started: started, error: error)
      throw error
    }
  }

  /// ``measure(_:key:_:)`` for a call that suspends.
  package func measure<T>(
    _ operation: WriteOperation, key: String?, isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> T
  ) async rethrows -> T {
    guard isActive else { return try await body() }
    let started = metrics == nil ? 0 : DispatchTime.now().uptimeNanoseconds
    let span = tracer.map { startSpan(operation, key: key, tracer: $0) }
    do {
      let result: T
      if let span {
        result = try await ServiceContext.$current.withValue(span.context) { try await body() }
      } else {
        result = try await body()
      }
      finish(operation, span: span, started: started, error: nil)
      return result
    } catch {
      finish(operation, span: span, started: started, error: error)
      throw error
    }
  }

  /// Runs a PostgreSQL catch-up in a span `pld.catch_up` (without metrics of its own: what it brings is
  /// counted by `pld.versions.received`).
  package func traceCatchUp<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
  ) async rethrows -> T {
    guard let tracer else { return try await body() }
    let span = tracer.startSpan(
      Self.catchUpSpanName, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
    span.attributes[Self.systemAttribute] = backend.rawValue
    do {
      let result = try await ServiceContext.$current.withValue(span.context) { try await body() }
      span.end()
      return result
    } catch {
      span.recordError(error)
      span.setStatus(SpanStatus(code: .error))
      span.end()
      throw error
    }
  }

  /// Times one SQLite `COMMIT` (its sync included) into `pld.commit.duration`.
  package func measureCommit(_ commit: () throws -> Void) rethrows {
    guard let timer = metrics?.commitDuration else { return try commit() }
    let started = DispatchTime.now().uptimeNanoseconds
    try commit()
    timer.recordNanoseconds(Self.elapsed(since: started))
  }

  /// Counts a version another process or replica committed, now handed to this process's observers, and
  /// times its delay since that commit.
  ///
  /// - Parameter writtenAtMilliseconds: When it was committed, in milliseconds since 1970 (`writtenAt`).
  package func received(writtenAtMilliseconds: Int64) {
    guard let metrics else { return }
    metrics.versionsReceived.increment()
    let now = Int64(Date().timeIntervalSince1970 * 1e9)
    metrics.deliveryDelay.recordNanoseconds(max(0, now - writtenAtMilliseconds &* 1_000_000))
  }

  /// Counts an `update` transform run again after a conflict (`pld.update.retries`).
  package func countRetry() {
    metrics?.updateRetries.increment()
  }

  /// Counts a stored version that did not decode (`pld.undecodable`).
  func countUndecodable() {
    metrics?.undecodable.increment()
  }

  /// Records how many calls one group commit committed (`pld.group_commit.size`).
  package func recordGroupCommit(size: Int) {
    metrics?.groupCommitSize?.record(size)
  }

  /// Counts a listener that listens again after losing its connection (`pld.postgres.reconnects`).
  package func countReconnect() {
    metrics?.reconnects?.increment()
  }

  // MARK: Spans

  /// The span of a PostgreSQL catch-up.
  static let catchUpSpanName = "pld.catch_up"
  /// The attribute naming the backend, after OpenTelemetry's database conventions.
  static let systemAttribute = "db.system.name"
  /// The attribute carrying ``TraceKeyHash`` of the key.
  static let keyHashAttribute = "pld.key.hash"
  /// The attribute carrying the key itself, only with `tracesKeys`.
  static let keyAttribute = "pld.key"

  private func startSpan(_ operation: WriteOperation, key: String?, tracer: any Tracer) -> any Span {
    let span = tracer.startSpan(
      operation.spanName, context: ServiceContext.current ?? .topLevel, ofKind: .client)
    span.attributes[Self.systemAttribute] = backend.rawValue
    if let key {
      span.attributes[Self.keyHashAttribute] = TraceKeyHash.of(key)
      if tracesKeys { span.attributes[Self.keyAttribute] = key }
    }
    return span
  }

  private func finish(_ operation: WriteOperation, span: (any Span)?, started: UInt64, error: (any Error)?) {
    if let metrics {
      if error == nil {
        metrics.recordSuccess(operation, nanoseconds: Self.elapsed(since: started))
      } else {
        metrics.recordFailure(operation)
      }
    }
    guard let span else { return }
    if let error {
      span.recordError(error)
      span.setStatus(SpanStatus(code: .error))
    }
    span.end()
  }

  private static func elapsed(since started: UInt64) -> Int64 {
    Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started)
  }
}

/// The key hash spans carry (`pld.key.hash`): 64-bit FNV-1a of the key's UTF-8 bytes, as 16 lowercase
/// hexadecimal digits. Stable across processes, machines and releases, so that one key's spans can be
/// found together without the key itself; not a cryptographic hash (a short key can be guessed from it).
///
/// ```swift
/// TraceKeyHash.of("theme")   // "…16 hexadecimal digits…"
/// ```
enum TraceKeyHash {
  package static func of(_ key: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in key.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01b3
    }
    let digits = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
