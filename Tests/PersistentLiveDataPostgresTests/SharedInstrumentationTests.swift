import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import Testing
import Tracing

/// The metrics and spans of the MetricsAndTraces article for the shared store, against a real PostgreSQL server. Each
/// replica under test is created inside `withMetricsFactory`/`withTracer` with a `TestMetrics` or an
/// `InMemoryTracer` of its own: nothing is bootstrapped for the process, parallel suites never meet.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedInstrumentationTests {
  static let backend = ("backend", "postgresql")

  /// A replica of `fixture` whose metrics go to `metrics`.
  static func replica(
    _ fixture: SharedFixture, _ metrics: TestMetrics, options: PostgresStoreOptions = PostgresStoreOptions(),
    listening: Bool = true
  ) -> Replica {
    withMetricsFactory(metrics) { fixture.replica(options: options, listening: listening) }
  }

  @Test func everyWriteCallIsTimedOnceByBackendAndOperation() async throws {
    let fixture = try await SharedFixture()
    let metrics = TestMetrics()
    let a = Self.replica(fixture, metrics)
    let flags = try await a.store.liveData("flags", default: [String: Bool]())
    try await flags.set(["checkout": true])
    try await flags.update { $0["search"] = true }
    try await flags.rollback(to: 1)
    try await a.store.transaction { try $0.set(flags, to: [:]) }
    await #expect(throws: PersistentLiveDataError.self) { try await flags.rollback(to: 99) }

    for operation in ["set", "update", "rollback", "transaction"] {
      let durations = try metrics.expectTimer("pld.write.duration", [Self.backend, ("operation", operation)])
      #expect(durations.values.count == 1, "\(operation)")
      #expect(durations.values.allSatisfy { $0 > 0 && $0 < 120_000_000_000 }, "\(operation)")
      let errors = try metrics.expectCounter("pld.write.errors", [Self.backend, ("operation", operation)])
      #expect(errors.totalValue == (operation == "rollback" ? 1 : 0), "\(operation)")
    }
    // A shared store has no reset or write(_:): no empty series for them.
    #expect(metrics.timers(label: "pld.write.duration").count == 4)
    // Its last call reached the server.
    #expect(try metrics.expectGauge("pld.postgres.reachable").lastValue == 1)
    #expect(metrics.timers(label: "pld.commit.duration").isEmpty)
    await a.shutDown()
  }

  @Test func anUpdateThatLostToAnotherReplicaCountsARetry() async throws {
    let fixture = try await SharedFixture()
    let metrics = TestMetrics()
    // A does not listen: its memory stays behind B's write, so its update conflicts once.
    let a = Self.replica(fixture, metrics, listening: false)
    let b = fixture.replica()
    let countA = try await a.store.liveData("count", default: 0)
    let countB = try await b.store.liveData("count", default: 0)
    try await countB.set(41)
    let written = try await countA.update { $0 += 1 }
    #expect(written == 42)
    #expect(try metrics.expectCounter("pld.update.retries", [Self.backend]).totalValue == 1)
    await a.shutDown()
    await b.shutDown()
  }

  @Test func aVersionFromAnotherReplicaIsCountedWithItsDelay() async throws {
    let fixture = try await SharedFixture()
    let metrics = TestMetrics()
    let a = Self.replica(fixture, metrics)
    let b = fixture.replica()
    let countA = try await a.store.liveData("count", default: 0)
    let countB = try await b.store.liveData("count", default: 0)
    let received = try metrics.expectCounter("pld.versions.received", [Self.backend])
    let before = received.totalValue
    try await countB.set(7)
    #expect(await eventually { countA.version == 1 })
    #expect(received.totalValue == before + 1)
    let delays = try metrics.expectTimer("pld.delivery.delay", [Self.backend]).values
    #expect(delays.count == 1)
    #expect(delays.allSatisfy { $0 >= 0 && $0 < 120_000_000_000 }, "nanoseconds: \(delays)")
    // B's own write is not a version received.
    #expect(try metrics.expectCounter("pld.undecodable", [Self.backend]).totalValue == 0)
    await a.shutDown()
    await b.shutDown()
  }

  @Test func aVersionFromAnotherReplicaThatDoesNotDecodeIsCountedOnce() async throws {
    let fixture = try await SharedFixture()
    let metrics = TestMetrics()
    let a = Self.replica(fixture, metrics)
    let b = fixture.replica()
    let countA = try await a.store.liveData("count", default: 0)
    let textB = try await b.store.liveData("count", default: "none")
    try await textB.set("not a number")
    let undecodable = try metrics.expectCounter("pld.undecodable", [Self.backend])
    #expect(await eventually { undecodable.totalValue > 0 })
    try await Task.sleep(for: .milliseconds(300))
    #expect(undecodable.totalValue == 1)
    #expect(countA.version == 0)
    await a.shutDown()
    await b.shutDown()
  }

  @Suite(
    .serialized,
    .enabled(
      if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation (initdb, pg_ctl)")
  )
  struct PrivateServer {
    @Test func aRestartCountsAReconnectAndTheServerIsUnreachableThenReachable() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        let metrics = TestMetrics()
        let a = SharedInstrumentationTests.replica(fixture, metrics)
        // The first call (its schema's preparation on a server just started) is retried while it times
        // out: under ThreadSanitizer, with two cores shared by every suite, it once took over 10 s. What
        // is measured here is the restart, not a first call on a loaded machine.
        for attempt in 1...30 {
          do {
            _ = try await a.store.liveData("count", default: 0)
            break
          } catch SharedStoreError.timedOut(_, _) where attempt < 30 {}
        }
        let reachable = try metrics.expectGauge("pld.postgres.reachable")
        let reconnects = try metrics.expectCounter("pld.postgres.reconnects")
        // The listener listens before the restart: its connection is named then.
        let listening = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pld-listener'"
        #expect(try await eventually { try await fixture.psql(listening) == "1" })
        // The listener records the server reachable just after its connection shows under that name (and a
        // slow first attempt, given up, may have recorded it unreachable before).
        #expect(await eventually { reachable.lastValue == 1 }, "\(reachable.values)")
        #expect(reconnects.totalValue == 0)

        try await server.restart()
        #expect(await eventually { reconnects.totalValue == 1 }, "\(a.log.last(20))")
        #expect(
          reachable.values.contains(0), "the lost connection made the server unreachable: \(reachable.values)"
        )
        #expect(reachable.lastValue == 1, "reachable again once the listener listens: \(reachable.values)")
        let zero = try #require(reachable.values.lastIndex(of: 0))
        #expect(reachable.values[(zero + 1)...].contains(1))
        await a.shutDown()
      }
    }
  }

  // MARK: Traces

  @Test func eachWriteCallAndEachCatchUpHasItsSpanWithoutTheKey() async throws {
    let fixture = try await SharedFixture()
    let tracer = InMemoryTracer()
    let a = withTracer(tracer) { fixture.replica() }
    let key = "user/jane@example.com/flags"
    let flags = try await a.store.liveData(key, default: [String: Bool]())
    try await flags.set(["checkout": true])
    try await flags.update { $0["search"] = true }
    try await flags.rollback(to: 1)
    try await a.store.transaction { try $0.set(flags, to: [:]) }
    #expect(await eventually { tracer.finishedSpans.contains { $0.operationName == "pld.catch_up" } })

    let spans = tracer.finishedSpans
    let writes = spans.filter { $0.operationName != "pld.catch_up" }
    #expect(writes.map(\.operationName) == ["pld.set", "pld.update", "pld.rollback", "pld.transaction"])
    for span in spans {
      #expect(span.attributes.get("db.system.name") == .string("postgresql"), "\(span.operationName)")
      #expect(span.attributes.get("pld.key") == nil)
      #expect(!"\(span.attributes)".contains("jane"), "\(span.operationName): \(span.attributes)")
    }
    let hash = SpanAttribute.string(TraceKeyHashReference.of(key))
    #expect(writes.prefix(3).allSatisfy { $0.attributes.get("pld.key.hash") == hash })
    #expect(writes.last?.attributes.get("pld.key.hash") == nil)
    await a.shutDown()
  }

  @Test func theKeyIsTracedWhenAskedAndASpanIsAChildOfTheCallers() async throws {
    let fixture = try await SharedFixture()
    let tracer = InMemoryTracer()
    var options = PostgresStoreOptions()
    options.tracesKeys = true
    let a = withTracer(tracer) { fixture.replica(options: options, listening: false) }
    let flags = try await a.store.liveData("flags", default: 0)
    try await tracer.withSpan("request") { _ in try await flags.set(1) }
    let set = try #require(tracer.finishedSpans.first { $0.operationName == "pld.set" })
    let request = try #require(tracer.finishedSpans.first { $0.operationName == "request" })
    #expect(set.attributes.get("pld.key") == .string("flags"))
    #expect(set.parentSpanID == request.spanID)
    await a.shutDown()
  }
}

/// 64-bit FNV-1a of a key's UTF-8 bytes in 16 hexadecimal digits, as spans carry it (`pld.key.hash`),
/// computed here independently of the library.
enum TraceKeyHashReference {
  static func of(_ key: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in key.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    let digits = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
