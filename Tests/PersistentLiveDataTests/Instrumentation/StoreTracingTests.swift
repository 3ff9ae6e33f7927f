import Foundation
import InMemoryTracing
import PLDTestSupport
import Testing
import Tracing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

/// The spans of the MetricsAndTraces article for the SQLite store, recorded by swift-distributed-tracing's in-memory tracer
/// bound with `withTracer` where each test opens its store (nothing is bootstrapped for the process).
@Suite struct StoreTracingTests {
  /// A store on a new file whose spans go to `tracer`.
  static func store(
    _ folder: TemporaryDirectory, _ tracer: InMemoryTracer, tracesKeys: Bool = false
  ) throws
    -> PersistentStore
  {
    var options = StoreOptions()
    options.tracesKeys = tracesKeys
    return try withTracer(tracer) { try PersistentStore(path: folder.path("store.db"), options: options) }
  }

  @Test func eachWriteCallHasItsSpanWithTheSystemAndTheKeyHashButNotTheKey() async throws {
    let folder = try TemporaryDirectory()
    let tracer = InMemoryTracer()
    let store = try Self.store(folder, tracer)
    let key = "user/jane@example.com/theme"
    let theme = try store.liveData(key, default: "light")
    try theme.set("dark")
    try theme.update { $0 += "er" }
    try theme.rollback(to: 1)
    try theme.reset()
    try await theme.write("blue")
    _ = try await store.write { 1 }
    try store.transaction {}

    let spans = tracer.finishedSpans
    #expect(
      spans.map(\.operationName) == [
        "pld.set", "pld.update", "pld.rollback", "pld.reset", "pld.write", "pld.write", "pld.transaction",
      ])
    for span in spans {
      #expect(span.attributes.get("db.system.name") == .string("sqlite"), "\(span.operationName)")
      #expect(span.attributes.get("pld.key") == nil, "\(span.operationName) must not carry the key")
      #expect(span.kind == .client)
      #expect(span.status == nil)
      let everything = "\(span.attributes)"
      #expect(!everything.contains("jane"), "no attribute carries the key: \(everything)")
    }
    // The calls on one key carry its hash; the calls that may write several keys carry none.
    let hash = SpanAttribute.string(TraceKeyHash.of(key))
    #expect(spans.prefix(5).allSatisfy { $0.attributes.get("pld.key.hash") == hash })
    #expect(spans.suffix(2).allSatisfy { $0.attributes.get("pld.key.hash") == nil })
  }

  @Test func theKeyItselfIsTracedOnlyWhenAsked() throws {
    let folder = try TemporaryDirectory()
    let tracer = InMemoryTracer()
    let store = try Self.store(folder, tracer, tracesKeys: true)
    try store.liveData("theme", default: "light").set("dark")
    let span = try #require(tracer.finishedSpans.first)
    #expect(span.attributes.get("pld.key") == .string("theme"))
    #expect(span.attributes.get("pld.key.hash") == .string(TraceKeyHash.of("theme")))
  }

  @Test func aWriteSpanIsAChildOfTheCallersSpan() async throws {
    let folder = try TemporaryDirectory()
    let tracer = InMemoryTracer()
    let store = try Self.store(folder, tracer)
    let theme = try store.liveData("theme", default: "light")
    try tracer.withSpan("request") { _ in try theme.set("dark") }
    try await tracer.withSpan("async request") { _ in try await theme.write("blue") }

    let spans = tracer.finishedSpans
    let set = try #require(spans.first { $0.operationName == "pld.set" })
    let request = try #require(spans.first { $0.operationName == "request" })
    #expect(set.parentSpanID == request.spanID)
    #expect(set.traceID == request.traceID)
    let write = try #require(spans.first { $0.operationName == "pld.write" })
    let asyncRequest = try #require(spans.first { $0.operationName == "async request" })
    #expect(write.parentSpanID == asyncRequest.spanID)
    // Without a caller's span, a write starts a trace of its own.
    try theme.set("red")
    #expect(tracer.finishedSpans.last?.parentSpanID == nil)
  }

  @Test func aWriteThatThrowsEndsItsSpanWithTheError() throws {
    struct Refused: Error {}
    let folder = try TemporaryDirectory()
    let tracer = InMemoryTracer()
    let store = try Self.store(folder, tracer)
    let count = try store.liveData("count", default: 0)
    #expect(throws: Refused.self) { try count.update { _ in throw Refused() } }
    let span = try #require(tracer.finishedSpans.first)
    #expect(span.operationName == "pld.update")
    #expect(span.status?.code == .error)
    #expect(span.errors.count == 1)
  }

  @Test func theKeyHashIsStableFNV1a() {
    // Reference values of 64-bit FNV-1a: the hash must not change between releases or processes.
    #expect(TraceKeyHash.of("") == "cbf29ce484222325")
    #expect(TraceKeyHash.of("a") == "af63dc4c8601ec8c")
    #expect(TraceKeyHash.of("foobar") == "85944171f73967e8")
  }
}
