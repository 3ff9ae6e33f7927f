import CoreMetrics
import Foundation
import Logging
import MetricsTestKit
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

/// The metrics of the MetricsAndTraces article for the SQLite store, with their labels and dimensions. Each test binds a
/// `TestMetrics` of its own with `withMetricsFactory` where it opens its store (the store takes the
/// factory in effect then), so suites running in parallel never see each other's series and nothing is
/// bootstrapped for the whole process.
@Suite struct StoreMetricsTests {
  static let backend = ("backend", "sqlite")

  /// A store on a new file whose metrics go to `metrics`.
  static func store(
    _ folder: TemporaryDirectory, _ metrics: TestMetrics, options: StoreOptions = StoreOptions()
  )
    throws -> PersistentStore
  {
    try withMetricsFactory(metrics) { try PersistentStore(path: folder.path("store.db"), options: options) }
  }

  /// How many durations `pld.write.duration` holds for `operation`.
  static func writes(_ metrics: TestMetrics, _ operation: String) throws -> Int {
    try metrics.expectTimer("pld.write.duration", [backend, ("operation", operation)]).values.count
  }

  /// The total of `pld.write.errors` for `operation`.
  static func errors(_ metrics: TestMetrics, _ operation: String) throws -> Int64 {
    try metrics.expectCounter("pld.write.errors", [backend, ("operation", operation)]).totalValue
  }

  @Test func everyWriteCallIsTimedOnceByBackendAndOperation() async throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let theme = try store.liveData("theme", default: "light")
    try theme.set("dark")
    try theme.update { $0 += "er" }
    try theme.rollback(to: 1)
    try theme.reset()
    try await theme.write("blue")
    _ = try await store.write { 1 }
    try store.transaction { try theme.set("red") }

    // The set inside the transaction is a call of its own.
    let expected = ["set": 2, "update": 1, "rollback": 1, "reset": 1, "write": 2, "transaction": 1]
    for (operation, count) in expected {
      #expect(try Self.writes(metrics, operation) == count, "\(operation)")
      #expect(try Self.errors(metrics, operation) == 0, "\(operation)")
    }
    let durations = try metrics.expectTimer("pld.write.duration", [Self.backend, ("operation", "set")]).values
    #expect(durations.allSatisfy { $0 > 0 && $0 < 60_000_000_000 }, "nanoseconds: \(durations)")
    // Nothing else is labelled as a write: six operations, with exactly these two dimensions.
    #expect(metrics.timers(label: "pld.write.duration").count == 6)
    #expect(
      metrics.timers(label: "pld.write.duration").allSatisfy {
        $0.dimensions.map(\.0) == ["backend", "operation"]
      })
  }

  @Test func aCallThatThrowsIsCountedAsAnErrorAndNotTimed() throws {
    struct Refused: Error {}
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    #expect(throws: Refused.self) { try count.update { _ in throw Refused() } }
    #expect(throws: PersistentLiveDataError.self) { try count.rollback(to: 7) }
    #expect(throws: Refused.self) { try store.transaction { throw Refused() } }
    try store.close()
    #expect(throws: PersistentLiveDataError.self) { try count.set(1) }

    for operation in ["update", "rollback", "transaction", "set"] {
      #expect(try Self.errors(metrics, operation) == 1, "\(operation)")
      #expect(try Self.writes(metrics, operation) == 0, "\(operation)")
    }
  }

  @Test func eachCommitIsTimedWithItsSync() throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    let commits = try metrics.expectTimer("pld.commit.duration", [Self.backend])
    let before = commits.values.count
    for value in 1...3 { try count.set(value) }
    try store.transaction {
      try count.set(4)
      try count.set(5)
    }
    #expect(commits.values.count == before + 4, "one COMMIT per set, one for the transaction")
    #expect(commits.values.suffix(4).allSatisfy { $0 > 0 })
  }

  @Test func aGroupCommitRecordsHowManyWritesItCommitted() async throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    // The writer is held until the eight calls wait behind it, however long the machine takes to start
    // their tasks: with every suite running under ThreadSanitizer on two cores, a 20 s bound released it
    // with seven queued (a group of seven). What is checked is the grouping, not the machine's speed.
    let holder = await Persistence.GroupCommitTests.holdWriter(store, untilWaiting: 8, within: .seconds(240))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask { _ = try await store.write { try count.update { $0 += 1 } } }
      }
      try await group.waitForAll()
    }
    try await holder.value
    #expect(count.value == 8)
    let sizes = try metrics.expectRecorder("pld.group_commit.size").values
    // The eight waiting calls commit together (with the holder, if its group took them in).
    #expect((sizes.max() ?? 0) >= 8, "the eight waiting calls committed as one group: \(sizes)")
    #expect(sizes.reduce(0, +) == 9, "every call counted once, the holder's included: \(sizes)")
  }

  @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
  func anUpdateThatLostToAnotherWriterCountsARetry() throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    try count.set(1)
    let runs = Locked(0)
    let path = folder.path("store.db")
    try count.update { value in
      if runs.withLock({
        $0 += 1; return $0
      }) == 1 {
        try? Self.insertFromAnotherProcess(path, key: "count", payload: "41", age: .zero)
      }
      value += 1
    }
    #expect(runs.withLock { $0 } == 2)
    #expect(count.value == 42)
    #expect(try metrics.expectCounter("pld.update.retries", [Self.backend]).totalValue == 1)
  }

  @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
  func aVersionFromAnotherProcessIsCountedWithItsDelay() async throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    try count.set(1)
    // Committed "five seconds ago" by its clock: the delay to this process's observers is at least that.
    try Self.insertFromAnotherProcess(folder.path("store.db"), key: "count", payload: "2", age: .seconds(5))
    let deadline = ContinuousClock.now + .seconds(30)
    while count.version < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    #expect(count.value == 2)
    #expect(try metrics.expectCounter("pld.versions.received", [Self.backend]).totalValue == 1)
    let delays = try metrics.expectTimer("pld.delivery.delay", [Self.backend]).values
    #expect(delays.count == 1)
    #expect(delays.allSatisfy { $0 >= 5_000_000_000 && $0 < 60_000_000_000 }, "nanoseconds: \(delays)")
  }

  @Test(.enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
  func aVersionThatDoesNotDecodeIsCountedOnce() async throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let store = try Self.store(folder, metrics)
    let count = try store.liveData("count", default: 0)
    try count.set(1)
    try Self.insertFromAnotherProcess(folder.path("store.db"), key: "count", payload: "\"text\"", age: .zero)
    let undecodable = try metrics.expectCounter("pld.undecodable", [Self.backend])
    let deadline = ContinuousClock.now + .seconds(30)
    while undecodable.totalValue == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    try await Task.sleep(for: .milliseconds(200))  // later checks see the same version: not counted again
    #expect(undecodable.totalValue == 1)
    #expect(count.version == 1)
    #expect(try metrics.expectCounter("pld.versions.received", [Self.backend]).totalValue == 0)
  }

  @Test func withoutAMetricsBackendTheStoreHasNoHandles() throws {
    let folder = try TemporaryDirectory()
    // Nothing in the test process bootstraps a metrics backend or a tracer.
    let store = try PersistentStore(path: folder.path("store.db"))
    #expect(store.database.instrumentation.metrics == nil)
    #expect(store.database.instrumentation.tracer == nil)
    try store.liveData("count", default: 0).set(1)
  }

  /// Inserts `payload` as the next version of `key` with the sqlite3 client, written `age` ago.
  static func insertFromAnotherProcess(_ path: String, key: String, payload: String, age: Duration) throws {
    let milliseconds = age.components.seconds * 1_000
    try SQLiteCLI.execute(
      path,
      """
      INSERT INTO pld_values (key, version, written_at, payload)
      SELECT '\(key)', coalesce(max(version), 0) + 1,
        CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - \(milliseconds), '\(payload)'
      FROM pld_values WHERE key = '\(key)';
      """)
  }
}

extension StoreMetricsTests {
  /// A conditional write that conflicts is a failed `set` like any other (`pld.write.errors`), and no
  /// error in the log: a conflict is an expected outcome of an edit, not a fault of the store.
  @Test func aVersionConflictCountsAsAFailedSetAndLogsNoError() throws {
    let folder = try TemporaryDirectory()
    let metrics = TestMetrics()
    let levels = Locked<[Logger.Level]>([])
    var options = StoreOptions()
    options.logger = Logger(label: "conflict") { _ in
      RecordingLogHandler { level, _, _ in levels.withLock { $0.append(level) } }
    }
    let store = try Self.store(folder, metrics, options: options)
    let note = try store.liveData("note", default: "")
    try note.set("a", ifVersion: 0)
    #expect(throws: VersionConflict.self) { try note.set("b", ifVersion: 0) }
    #expect(try Self.errors(metrics, "set") == 1)
    #expect(try Self.writes(metrics, "set") == 1)
    #expect(levels.withLock { $0 }.allSatisfy { $0 < .error }, "no error logged: \(levels.withLock { $0 })")
  }
}
