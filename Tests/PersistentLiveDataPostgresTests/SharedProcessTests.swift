import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO
import Testing

/// Replicas in separate processes (`pld-postgres-child`, built with the tests) and in this one share a
/// database: every version one writes reaches the others through `changes(since:)`, in order, once.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedProcessTests {
  /// How long a child may take to do its part: it starts a process, connects and applies the schema
  /// behind every suite of the parallel run, which took over 30 s under ThreadSanitizer on the two-core
  /// CI machines (a 30 s limit failed there). A child that hangs is still killed.
  static let childLimit = sanitizerScaled(.seconds(120))

  @Test func everyVersionAnotherProcessWritesArrivesHereInOrder() async throws {
    let fixture = try await SharedFixture()
    let b = fixture.replica()
    let count = 150
    let data = try await b.store.liveData("from-child", default: 0)
    let observed = Recorder<Int>()
    let observer = await FailureHelpers.record(data, into: observed)
    let changes = Task {
      await FailureHelpers.collect(data.changes(since: 0), count: count, within: Self.childLimit)
    }
    let child = try Self.child("write", fixture, key: "from-child", count: count)
    let (lines, killed) = await child.finish(within: Self.childLimit)
    #expect(!killed, "the child finished in time")
    #expect(child.exitCode == 0)
    #expect(lines == ["done \(count)"])

    let delivered = await changes.value
    #expect(delivered.error == nil, "\(String(describing: delivered.error))")
    #expect(delivered.versions.map(\.version) == Array(1...Int64(count)), "each version once, in order")
    #expect(delivered.versions.map(\.value) == Array(1...count))
    #expect(await eventually { data.version == Int64(count) && observed.all.last == count })
    #expect(data.value == count)
    let values = observed.all
    #expect(zip(values, values.dropFirst()).allSatisfy(<), "observers: nothing twice, nothing out of order")
    observer.cancel()
    await b.shutDown()
  }

  @Test func anotherProcessObservesEveryVersionWrittenHere() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let data = try await a.store.liveData("to-child", default: 0)
    let count = 100
    // Half before the child starts (it replays them), half while it listens.
    for value in 1...count / 2 { try await data.set(value) }
    let child = try Self.child("observe", fixture, key: "to-child", count: count)
    let output = Task { await child.finish(within: Self.childLimit) }
    for value in count / 2 + 1...count { try await data.set(value) }
    let (lines, killed) = await output.value
    #expect(!killed, "the child saw version \(count) in time")
    #expect(child.exitCode == 0)
    #expect(lines == (1...count).map { "version \($0) value \($0)" } + ["done"])
    await a.shutDown()
  }

  @Test func updatesFromTwoOtherProcessesAndThisOneLoseNothing() async throws {
    let fixture = try await SharedFixture()
    let b = fixture.replica()
    let data = try await b.store.liveData("counter", default: 0)
    let perChild = 60
    let here = 30
    let total = 2 * perChild + here
    let changes = Task {
      await FailureHelpers.collect(data.changes(since: 0), count: total, within: Self.childLimit)
    }
    let children = try (0..<2).map { _ in
      try Self.child("increment", fixture, key: "counter", count: perChild)
    }
    let outputs = children.map { child in Task { await child.finish(within: Self.childLimit) } }
    for _ in 0..<here { try await data.update { $0 += 1 } }
    for (index, (child, output)) in zip(children, outputs).enumerated() {
      let (lines, killed) = await output.value
      #expect(!killed, "child #\(index) finished in time")
      #expect(child.exitCode == 0, "child #\(index): \(lines)")
      #expect(lines.count == 1 && lines.first?.hasPrefix("done ") == true, "child #\(index): \(lines)")
    }

    let delivered = await changes.value
    #expect(delivered.error == nil, "\(String(describing: delivered.error))")
    #expect(delivered.versions.map(\.version) == Array(1...Int64(total)), "each version once, in order")
    let lost = delivered.versions.filter { Int64($0.value) != $0.version }.map(\.version)
    #expect(lost.isEmpty, "each update started from the version before it: \(lost.prefix(10))")
    #expect(await eventually { data.version == Int64(total) })
    #expect(data.value == total)
    let stored = try await fixture.psql("SELECT count(*), max(version) FROM pld_values")
    #expect(stored == "\(total)|\(total)", "one row per version, no gap")
    await b.shutDown()
  }

  /// A writer whose notification is lost after its commit (the notification is sent after the commit, in
  /// a statement of its own; a writer that dies between the two loses it the same way — here the server
  /// refuses the child's `pg_notify`): the version is never notified — a connection listening on the
  /// channel hears the versions before it and not that one — and another replica still gets it, through
  /// its periodic catch-up, within the interval: once, in order, after every earlier one.
  ///
  /// The child writes one version only: a notification of an earlier version of the key, read just after
  /// the last commit, would bring the last version as well (a read takes the newest row).
  @Test func aVersionWhoseWriterDiedBeforeNotifyingArrivesThroughThePeriodicCatchUp() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .milliseconds(500)
    let a = fixture.replica()
    let b = fixture.replica(options: options)
    let key = "dies-before-notify"
    let before = 10
    let count = before + 1
    let data = try await b.store.liveData(key, default: 0)
    try await Listeners.expectListening([a, b], fixture, "the replicas listen before anyone writes")
    let heard = Recorder<Int64>()
    let eavesdropper = fixture.replica(listening: false)
    let listening = Locked(false)
    let eavesdropping = Task {
      try await eavesdropper.client.withConnection { connection in
        try await connection.listen(on: "pld_changes") { notifications in
          listening.withLock { $0 = true }
          for try await notification in notifications {
            // One entry per line: `VERSION ORIGIN k KEY`.
            for entry in notification.payload.split(separator: "\n") {
              if let version = entry.split(separator: " ").first.flatMap({ Int64($0) }) {
                heard.append(version)
              }
            }
          }
        }
      }
    }
    #expect(await eventually { listening.withLock { $0 } })
    let observed = Recorder<Int>()
    let observer = await FailureHelpers.record(data, into: observed)
    let changes = Task {
      await FailureHelpers.collect(data.changes(since: 0), count: count, within: Self.childLimit)
    }
    // Versions 1 … 10 hold -10 … -1, notified as usual; the child's one write is version 11, value 1.
    let writer = try await a.store.liveData(key, default: 0)
    for value in -before ... -1 { try await writer.set(value) }
    #expect(await eventually { data.version == Int64(before) })

    let role = try await fixture.roleWithTablePrivilegesOnly(canNotify: false)
    let child = try Self.child("write", fixture, key: key, count: 1, user: role)
    let (lines, killed) = await child.finish(within: Self.childLimit)
    let died = ContinuousClock.now
    #expect(!killed, "the child reached version \(count) in time")
    #expect(child.exitCode == 0 && lines == ["done \(count)"], "it committed version \(count): \(lines)")
    let stored = try await fixture.psql("SELECT max(version) FROM pld_values")
    #expect(stored == "\(count)", "the version committed: \(stored)")

    // The interval, plus a margin for a loaded machine (the whole suite runs at once on two cores).
    let bound = options.catchUpInterval + sanitizerScaled(.milliseconds(4_500))
    let arrived = await eventually(bound) { data.version == Int64(count) }
    let took = died.duration(to: .now)
    TestFigures.record("POSTGRES lost-notify-catch-up-ms=\(Int(took / .milliseconds(1)))")
    #expect(arrived, "the periodic catch-up brought version \(count) within \(bound); took \(took)")
    #expect(data.value == 1)

    let delivered = await changes.value
    #expect(delivered.error == nil, "\(String(describing: delivered.error))")
    #expect(delivered.versions.map(\.version) == Array(1...Int64(count)), "each version once, in order")
    #expect(delivered.versions.map(\.value) == Array(-before ... -1) + [1])
    #expect(await eventually { observed.all.last == 1 })
    let values = observed.all
    #expect(zip(values, values.dropFirst()).allSatisfy(<), "observers: nothing twice, nothing out of order")

    // The earlier versions were notified (a burst by its newest version); a notification of the last
    // would have arrived within milliseconds of its commit.
    try await Task.sleep(for: .milliseconds(500))
    let notified = Set(heard.all)
    #expect(
      notified.contains(Int64(before)), "the writes before the last were notified: \(notified.sorted())")
    #expect(
      !notified.contains(Int64(count)), "no notification of version \(count) was sent: \(notified.sorted())")
    observer.cancel()
    eavesdropping.cancel()
    _ = await eavesdropping.result
    await eavesdropper.shutDown()
    await a.shutDown()
    await b.shutDown()
  }

  // MARK: Helpers

  /// Starts `pld-postgres-child MODE ENDPOINT USER DATABASE KEY COUNT` on the fixture's database.
  static func child(
    _ mode: String, _ fixture: SharedFixture, key: String, count: Int, user: String? = nil,
    environment extra: [String: String] = [:]
  ) throws -> ChildProcess {
    let endpoint: String
    switch fixture.server.endpoint {
    case .socket(let path): endpoint = path
    case .host(let host, let port): endpoint = "\(host):\(port)"
    }
    var environment: [String: String] = [:]
    if let password = fixture.server.password { environment["PLD_CHILD_PASSWORD"] = password }
    environment.merge(extra) { _, new in new }
    return try ChildProcess(
      ChildProcess.postgresChildPath,
      [mode, endpoint, user ?? fixture.server.username, fixture.database, key, "\(count)"],
      mergingStandardError: true, environment: environment)
  }
}
