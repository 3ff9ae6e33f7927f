import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgresTesting
import Testing

@testable import PersistentLiveDataPostgres

/// What a shared store does when things go wrong — a server restart, a dropped connection, a server that
/// is down, concurrent writers, values and keys that do not fit, rows of a newer type — against a real
/// PostgreSQL server. Tests that restart or stop a server run on a private one of their own.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedFailureTests {
  // MARK: Outages

  /// Tests that restart, halt or resume a server: each starts its own and removes it at the end.
  @Suite(
    .serialized,
    .enabled(
      if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation (initdb, pg_ctl)")
  )
  struct PrivateServer {
    @Test func aRestartWhileOneReplicaWritesLeavesTheOtherOnEveryLatestVersionOnce() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        var writerOptions = PostgresStoreOptions()
        // Short, so that a write a restart catches in flight gives up soon; under a sanitizer (everything
        // several times slower, two cores shared by every suite) a read taking 2 s is no outage.
        writerOptions.operationTimeout = sanitizerScaled(.seconds(2))
        // No periodic catch-up on B: it must listen again and catch up by itself after the restart.
        var listening = PostgresStoreOptions()
        listening.catchUpInterval = .seconds(600)
        // The schema is applied first with the default timeout: on a server just started, with two
        // cores shared by every suite, creating it can take longer than the writer's 2 s.
        let warm = fixture.replica()
        _ = try await warm.store.keys()
        await warm.shutDown()
        let a = fixture.replica(options: writerOptions)
        let b = fixture.replica(options: listening)
        // The writer's own first call (its check of the schema) is retried while it times out: what is
        // measured here is the restarts, not a first call on a loaded machine.
        for attempt in 1...30 {
          do {
            _ = try await a.store.keys()
            break
          } catch SharedStoreError.timedOut(_, _) where attempt < 30 {}
        }
        let catchUp = try await Outage.exercise(
          fixture: fixture, writer: a, observer: b, keys: (1...4).map { "restart-\($0)" }
        ) { written in
          // Three restarts, each while A writes: a read the restart catches in flight may hang.
          for restart in 1...3 {
            try await server.restart()
            guard restart < 3 else { break }
            let before = written[0].version
            #expect(
              await eventually { written[0].version >= before + 5 }, "A writes after restart \(restart)")
          }
        }
        // Asserted (< 5 s) in exercise; nil: not within 20 s.
        let milliseconds = catchUp.map {
          $0.components.seconds * 1_000 + $0.components.attoseconds / 1_000_000_000_000_000
        }
        // A figure line like the reliability suite's: to PLD_FIGURES_FILE, not among the test output.
        TestFigures.record("POSTGRES restart-catch-up-ms=\(milliseconds.map(String.init) ?? "over-20000")")
        await a.shutDown()
        await b.shutDown()
      }
    }

    @Test func aSetWhileTheServerIsDownThrowsInTimeChangesNothingAndTheNextSetIsGapFree() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        var options = PostgresStoreOptions()
        options.operationTimeout = .seconds(1)
        let a = fixture.replica(options: options)
        let data = try await a.store.liveData("halted", default: "none")
        try await data.set("before")
        #expect(data.version == 1)
        let observed = Recorder<String>()
        let observer = await FailureHelpers.record(data, into: observed)

        // The test server commits asynchronously (synchronous_commit=off) and halt() stops it like a crash:
        // what is not yet in the WAL on disk would be lost, schema included. A checkpoint writes it first.
        try await fixture.psql("CHECKPOINT")
        try await server.halt()
        let operations: [(String, @Sendable () async throws -> Void)] = [
          ("set", { try await data.set("during") }),
          ("update", { try await data.update { $0 = "updated" } }),
          ("history", { _ = try await data.history() }),
          ("liveData", { _ = try await a.store.liveData("another", default: 0) }),
        ]
        for (name, operation) in operations {
          let started = ContinuousClock.now
          let error = await #expect(throws: SharedStoreError.self, "\(name) while the server is down") {
            try await operation()
          }
          let elapsed = started.duration(to: .now)
          // The bound tells "gives up in time" from "hangs": under a sanitizer on two shared cores the
          // timeout's own task can start seconds late (4.7 s once), so the bound is scaled there.
          let bound = sanitizerScaled(.seconds(3))
          #expect(elapsed < bound, "\(name) gave up after \(elapsed), not within \(bound) (timeout 1 s)")
          if let error {
            #expect(FailureHelpers.isOutage(error), "\(name): \(error)")
          }
          #expect(data.value == "before", "\(name) changed nothing in memory")
          #expect(data.version == 1)
        }
        await MainActor.run {}
        #expect(observed.all.isEmpty, "no observer heard of a write that failed")

        try await server.resume()
        let resumed = ContinuousClock.now
        let kept = try await fixture.psql("SELECT count(*) FROM pld_values")
        #expect(kept == "1", "only the version written before the outage is stored")
        // The next set should simply work. It can wait for postgres-nio's pool, though, which backs off
        // between connection attempts while the server is down (100 ms × 1.25ⁿ: about 1 s after this
        // outage) and so can outlast the 1 s timeout. Then it must have written nothing, and a retry works.
        var written = false
        await withKnownIssue(
          "the first write after the server is back waits out the pool's backoff", isIntermittent: true
        ) {
          try await data.set("after")
          written = true
        }
        var unexpected: [String] = []
        while !written && resumed.duration(to: .now) < .seconds(5) {
          // A set that timed out may have committed after all (its error says so, on a loaded machine it
          // did): the server is asked before the set is tried again, as an app that got that error would.
          if try await fixture.psql("SELECT count(*) FROM pld_values") == "2" {
            written = true
            break
          }
          do {
            try await data.set("after")
            written = true
          } catch let error as SharedStoreError where FailureHelpers.isOutage(error) {
            try await Task.sleep(for: .milliseconds(20))
          } catch {
            unexpected.append("\(error)")
            break
          }
        }
        #expect(unexpected.isEmpty)
        #expect(written, "a set works within 5 s of the server coming back")
        // When the set that timed out committed, the store learns its version from the server.
        #expect(
          await eventually(.seconds(10)) { data.version == 2 && data.value == "after" },
          "the next version after the outage follows the last one")
        try await data.set("final")
        #expect(data.version == 3)
        let rows = try await fixture.psql(
          "SELECT string_agg(version::text || '=' || payload, ',' ORDER BY version) FROM pld_values")
        #expect(rows == #"1="before",2="after",3="final""#, "no write that threw was committed after all")
        // Deliveries of writes made off the main actor coalesce to the newest: "after" may be skipped when
        // "final" is committed before the main actor runs its delivery; nothing else may be delivered.
        #expect(
          await eventually { observed.all == ["after", "final"] || observed.all == ["final"] },
          "observers: \(observed.all)")
        #expect(a.isRunning, "run() outlived the outage: \(a.runOutcome.value ?? "")")
        observer.cancel()
        await a.shutDown()
      }
    }
  }

  @Test func aKilledListeningConnectionIsReplacedAndTheReplicaCatchesUp() async throws {
    let fixture = try await SharedFixture()
    // No periodic catch-up on B: only a new LISTEN and the catch-up after it can bring it up to date.
    var listening = PostgresStoreOptions()
    listening.catchUpInterval = .seconds(600)
    let a = fixture.replica()
    let b = fixture.replica(options: listening)
    try await Listeners.expectListening([a, b], fixture, "both replicas listen")
    let killed = Locked<Set<Int>>([])
    _ = try await Outage.exercise(
      fixture: fixture, writer: a, observer: b, keys: (1...3).map { "listen-\($0)" }
    ) { _ in
      let pids = try await Listeners.settled(fixture, count: 2)
      killed.withLock { $0 = pids }
      #expect(try await Listeners.terminate(pids, fixture) == 2, "both listening connections were terminated")
      let replaced = try await eventually {
        let now = try await Listeners.pids(fixture)
        return now.count == 2 && now.isDisjoint(with: pids)
      }
      #expect(replaced, "both replicas listen again on new connections")
    }
    #expect(killed.withLock { $0.count } == 2)

    // A version committed without a notification (as if it was sent while B was not listening) reaches
    // B only through the catch-up that follows a new LISTEN.
    let quietOnA = try await a.store.liveData("quiet", default: 0)
    let quietOnB = try await b.store.liveData("quiet", default: 0)
    try await quietOnA.set(1)
    #expect(await eventually { quietOnB.version == 1 })
    try await fixture.psql(
      """
      WITH head AS (
        UPDATE pld_heads SET version = version + 1 WHERE key = 'quiet' RETURNING key_hash, version)
      INSERT INTO pld_values (key_hash, version, payload, schema_version)
      SELECT key_hash, version, version::text, 1 FROM head
      """)
    #expect(quietOnB.version == 1, "nothing told B yet")
    let listeners = try await Listeners.settled(fixture, count: 2)
    #expect(
      try await Listeners.terminate(listeners, fixture) == 2, "both listening connections were terminated")
    #expect(
      await eventually(.seconds(3)) { quietOnB.version == 2 }, "B caught up by version after listening again")
    #expect(quietOnB.value == 2)
    #expect(b.isRunning)
    await a.shutDown()
    await b.shutDown()
  }

  /// A listener that lost its connection listens again at once, and catches up on the new one, but that
  /// catch-up can be slow (a loaded machine, a lock): the session is kept, not given up by the short
  /// deadline a lease and a LISTEN have. When it was given up, each new attempt sent the same catch-up
  /// again, and on a slow enough machine no attempt ever finished in time.
  @Test func aSlowCatchUpAfterAReconnectIsWaitedForAndNotSentAgain() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .seconds(600)
    // Longer than the lock below: the catch-up read waits for it and then succeeds.
    options.operationTimeout = .seconds(120)
    let writer = fixture.replica(listening: false)
    let listener = fixture.replica(options: options)
    let written = try await writer.store.liveData("slow", default: 0)
    try await written.set(1)
    let live = try await listener.store.liveData("slow", default: 0)
    #expect(live.version == 1)
    let pids = try await Listeners.settled(fixture, count: 1)
    // The listener's replica builds the concurrent index on pld_heads in a task of its own; on a slow
    // machine that build can still be under way, and would then wait for the lock below as well.
    let indexBuilt =
      "SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass('pld_heads_key_prefix') AND indisvalid"
    #expect(
      try await eventually(.seconds(60)) { try await fixture.psql(indexBuilt) == "1" },
      "the replica built its index before the table is locked")

    // Another session locks pld_heads (held until it is terminated), so that the listener's catch-up
    // query waits for it.
    let database = fixture.database
    let server = fixture.server
    let locker = Task {
      try? await server.psql(
        """
        SET application_name = 'pld-test-locker';
        BEGIN; LOCK TABLE pld_heads IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600); COMMIT;
        """, database: database)
    }
    let granted =
      "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
      + "WHERE a.application_name = 'pld-test-locker' AND l.granted AND l.mode = 'AccessExclusiveLock'"
    #expect(try await eventually { try await fixture.psql(granted) == "1" }, "the table is locked")
    #expect(try await Listeners.terminate(pids, fixture) == 1)
    // Catch-up queries of this database that wait for the lock.
    let waiting = """
      SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND application_name <> 'pld-test-locker'
      """
    #expect(
      try await eventually { try await fixture.psql(waiting) != "0" }, "the catch-up waits for the lock")
    // Several times the first deadline (500 ms): a listener that gave its session up would have sent
    // the catch-up again by now, each on a connection of its own.
    try await Task.sleep(for: .seconds(3))
    let waitingNow = try await fixture.psql(waiting)
    let waiters = try await fixture.psql(
      "SELECT string_agg(application_name || ': ' || left(query, 60), ' | ') FROM pg_stat_activity "
        + "WHERE datname = current_database() AND wait_event_type = 'Lock'")
    #expect(waitingNow == "1", "one catch-up waits, sent once: \(waiters)")

    _ = try await fixture.psql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pld-test-locker'")
    _ = await locker.value
    // The session that waited listens, and hears the next write.
    _ = try await Listeners.settled(fixture, count: 1)
    try await written.set(2)
    #expect(await eventually { live.version == 2 }, "the listener hears the next write")
    #expect(listener.isRunning)
    await writer.shutDown()
    await listener.shutDown()
  }

  // MARK: Concurrency

  @Test func concurrentUpdatesOnTwoReplicasLoseNothing() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("counter", default: 0)
    let onB = try await b.store.liveData("counter", default: 0)
    let tasksPerReplica = 8
    let updatesPerTask = 25
    let total = 2 * tasksPerReplica * updatesPerTask
    let failures = Recorder<String>()
    await withTaskGroup(of: Void.self) { group in
      for data in [onA, onB] {
        for _ in 0..<tasksPerReplica {
          group.addTask {
            for _ in 0..<updatesPerTask {
              do {
                try await data.update { $0 += 1 }
              } catch {
                failures.append("\(error)")
              }
            }
          }
        }
      }
    }
    #expect(failures.all.isEmpty)
    #expect(await eventually { onA.version == Int64(total) && onB.version == Int64(total) })
    #expect(onA.value == total)
    #expect(onB.value == total)
    let history = try await onB.history()
    #expect(history.map(\.version) == Array((1...Int64(total)).reversed()), "versions 1 … \(total), no gap")
    let mismatched = history.filter { Int64($0.value) != $0.version }.map(\.version)
    #expect(mismatched.isEmpty, "each update started from the version before it: \(mismatched.prefix(10))")
    let stored = try await fixture.psql("SELECT count(*), max(version) FROM pld_values")
    #expect(stored == "\(total)|\(total)")
    await a.shutDown()
    await b.shutDown()
  }

  @Test func sixReplicasStartingTogetherApplyTheSchemaOnce() async throws {
    let fixture = try await SharedFixture()
    // What is tested is "once", not how fast: six migrations racing on a loaded two-core machine, at the
    // start of the whole suite, took longer than the default 10 s once.
    var patient = PostgresStoreOptions()
    patient.operationTimeout = .seconds(60)
    let replicas = (0..<6).map { _ in fixture.replica(options: patient) }
    let failures = Recorder<String>()
    // Each replica's run() and its first use race to prepare the schema.
    await withTaskGroup(of: Void.self) { group in
      for replica in replicas {
        group.addTask {
          do {
            let data = try await replica.store.liveData("started", default: 0)
            try await data.update { $0 += 1 }
          } catch {
            failures.append("\(error)")
          }
        }
      }
    }
    #expect(failures.all.isEmpty)
    try await Listeners.expectListening(replicas, fixture, "every run() got past the schema")
    let schemaRows = try await fixture.psql("SELECT count(*) FROM pld_schema")
    #expect(schemaRows == "\(SharedSchema.current)")
    let versions = try await fixture.psql(
      "SELECT string_agg(version::text, ',' ORDER BY version) FROM pld_schema")
    #expect(versions == SharedSchema.migrations.map { "\($0.version)" }.joined(separator: ","))
    let tables = try await fixture.psql(
      "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE tablename LIKE 'pld\\_%'")
    #expect(tables == "pld_heads,pld_removals,pld_replicas,pld_schema,pld_values")
    let head = try await fixture.psql("SELECT version FROM pld_heads")
    #expect(head == "6", "each replica's update counted")
    let outcomes = replicas.compactMap(\.runOutcome.value)
    #expect(outcomes.isEmpty, "run() ended: \(outcomes)")
    for replica in replicas { await replica.shutDown() }
  }

  // MARK: Sizes and keys

  @Test func largeValuesAndLongKeysReachTheOtherReplicaAndBadKeysAreRefused() async throws {
    let fixture = try await SharedFixture()
    // No periodic catch-up on B: what arrives, arrives through the notification.
    var listening = PostgresStoreOptions()
    listening.catchUpInterval = .seconds(600)
    let a = fixture.replica()
    let b = fixture.replica(options: listening)
    let large = (0..<3_000).map { "item-\($0)" }.joined(separator: ",")
    #expect(large.utf8.count > 8_192)
    let longKey = String(repeating: "k", count: 9_000)
    let longestKey = String(repeating: "m", count: 1 << 20)
    let keys = ["large", longKey, longestKey]
    var observing: [SharedLiveData<String>] = []
    for key in keys { observing.append(try await b.store.liveData(key, default: "")) }
    let onB = observing
    try await Listeners.expectListening([a, b], fixture, "both replicas listen")

    var onA: [SharedLiveData<String>] = []
    for key in keys { onA.append(try await a.store.liveData(key, default: "")) }
    // Twice: the second round comes after B's one catch-up (when it began to listen) for certain.
    let rounds = [
      [large, "under a key longer than a notification", large],
      [large + ",again", "again", String(large.reversed())],
    ]
    for (round, written) in rounds.enumerated() {
      for (data, value) in zip(onA, written) { try await data.set(value) }
      for (index, data) in onB.enumerated() {
        let version = Int64(round + 1)
        #expect(await eventually(.seconds(3)) { data.version == version }, "key #\(index) reached B")
        #expect(data.value == written[index], "key #\(index): B holds the value A wrote")
      }
    }
    #expect(try await b.store.keys().sorted() == keys.sorted())
    #expect(try await onB[1].history().map(\.value) == rounds.map { $0[1] }.reversed())

    let refused = [String(repeating: "x", count: (1 << 20) + 1), "a\u{0}b", "\u{0}", ""]
    for (index, key) in refused.enumerated() {
      let error = await #expect(throws: PersistentLiveDataError.self, "bad key #\(index)") {
        _ = try await a.store.liveData(key, default: "")
      }
      if case .invalidKey(let named, _)? = error {
        #expect(named == key, "the error names the key")
      } else {
        Issue.record("bad key #\(index): expected invalidKey, got \(String(describing: error))")
      }
    }
    let heads = try await fixture.psql("SELECT count(*) FROM pld_heads")
    #expect(heads == "3", "a refused key wrote nothing")
    await a.shutDown()
    await b.shutDown()
  }

  // MARK: Values of a newer type

  /// The stored form of schema version 1.
  struct NoteV1: PersistentValue, Equatable {
    var text: String
  }

  /// Schema version 2: `text` became `title`, and `pinned` was added.
  struct NoteV2: PersistentValue, Equatable {
    static let schemaVersion = 2
    var title: String
    var pinned: Bool

    init(title: String, pinned: Bool) {
      self.title = title
      self.pinned = pinned
    }

    init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
      self.init(title: try NoteV1(from: decoder).text, pinned: false)
    }
  }

  @Test(.timeLimit(.minutes(5))) func aRowOfANewerTypeIsHandledByEachPolicyAndNeverResetOrDeleted()
    async throws
  {
    let fixture = try await SharedFixture()
    let key = "note"
    let newer = fixture.replica()
    // Live values of an older build on three replicas, one per policy. No periodic catch-up: a replica's
    // notifications arrive in the order it committed, so once the marker arrives, the note's version 3
    // (from the same replica) arrived before it.
    let policies: [DecodeFailurePolicy] = [.throwError, .useDefault, .lastDecodable]
    var liveReplicas: [Replica] = []
    var liveNotes: [SharedLiveData<NoteV1>] = []
    var liveMarkers: [SharedLiveData<Int>] = []
    for policy in policies {
      var options = PostgresStoreOptions(onUndecodable: policy)
      options.catchUpInterval = .seconds(600)
      let replica = fixture.replica(options: options)
      liveReplicas.append(replica)
      liveNotes.append(try await replica.store.liveData(key, default: NoteV1(text: "")))
      liveMarkers.append(try await replica.store.liveData("marker", default: 0))
    }
    let (olds, notes, markers) = (liveReplicas, liveNotes, liveMarkers)
    var oldEvents = olds[0].store.events().makeAsyncIterator()
    try await notes[0].set(NoteV1(text: "a"))
    try await notes[0].set(NoteV1(text: "b"))
    // Version 2 reaches every older live value before the newer build writes version 3. (A notification
    // is sent after its commit: without this wait, a replica could first read the note after version 3
    // was written, and keep version 0, the last it could decode.)
    for (index, policy) in policies.enumerated() {
      #expect(await eventually { notes[index].version == 2 }, "\(policy): version 2 arrived")
    }
    let newNote = try await newer.store.liveData(key, default: NoteV2(title: "", pinned: false))
    #expect(newNote.version == 2)
    #expect(newNote.value == NoteV2(title: "b", pinned: false), "an older row is upgraded")
    try await newNote.set(NoteV2(title: "c", pinned: true))
    #expect(newNote.version == 3)
    try await Listeners.expectListening(olds + [newer], fixture, "every replica listens")
    try await newer.store.liveData("marker", default: 0).set(1)

    for (index, policy) in policies.enumerated() {
      #expect(await eventually { markers[index].version == 1 }, "\(policy): the marker arrived")
      #expect(notes[index].version == 2, "\(policy): a live value keeps its last version")
      #expect(notes[index].value == NoteV1(text: "b"), "\(policy): a live value keeps its last value")
    }
    let tooNew = PersistentLiveDataError.valueSchemaTooNew(key: key, version: 3, stored: 2, supported: 1)
    #expect(
      await oldEvents.next() == .undecodableVersion(key: key, version: 3, error: tooNew),
      "the app hears of the version it cannot read, without a logger")
    let noteHash = "(SELECT key_hash FROM pld_heads WHERE key = 'note')"

    // A new live value of the older build, under each policy.
    var options = PostgresStoreOptions()
    options.onUndecodable = .throwError
    let strict = fixture.replica(options: options)
    let refusal = await #expect(throws: PersistentLiveDataError.self) {
      _ = try await strict.store.liveData(key, default: NoteV1(text: "default"))
    }
    #expect(refusal == tooNew)
    options.onUndecodable = .useDefault
    let lenient = fixture.replica(options: options)
    var lenientEvents = lenient.store.events().makeAsyncIterator()
    let fromDefault = try await lenient.store.liveData(key, default: NoteV1(text: "default"))
    #expect(
      await lenientEvents.next()
        == .restoredPastUndecodable(key: key, version: 3, startedFrom: nil, error: tooNew))
    #expect(fromDefault.value == NoteV1(text: "default"))
    #expect(fromDefault.version == 3, "starts at the newest version, so the next write goes above it")
    options.onUndecodable = .lastDecodable
    let forgiving = fixture.replica(options: options)
    var forgivingEvents = forgiving.store.events().makeAsyncIterator()
    let fromLast = try await forgiving.store.liveData(key, default: NoteV1(text: "default"))
    #expect(
      await forgivingEvents.next()
        == .restoredPastUndecodable(key: key, version: 3, startedFrom: 2, error: tooNew))
    #expect(fromLast.value == NoteV1(text: "b"))
    #expect(fromLast.version == 3)

    // Reading it from the older build.
    #expect(
      try await fromDefault.history().map(\.version) == [2, 1], "history leaves out what does not decode")
    let atThree = await #expect(throws: PersistentLiveDataError.self) {
      _ = try await fromDefault.value(at: 3)
    }
    #expect(atThree == tooNew)
    let changes = await FailureHelpers.collect(notes[0].changes(since: 0), count: 3)
    #expect(changes.versions.map(\.version) == [1, 2], "every version before the one that does not decode")
    #expect(changes.error as? PersistentLiveDataError == tooNew, "then an error naming it")

    // An update on the strict live value reports it and writes nothing.
    let updateError = await #expect(throws: PersistentLiveDataError.self) {
      try await notes[0].update { $0.text += "!" }
    }
    #expect(updateError == tooNew)
    #expect(notes[0].version == 2)
    let rowsAfterUpdate = try await fixture.psql(
      "SELECT count(*) FROM pld_values WHERE key_hash = \(noteHash)")
    #expect(rowsAfterUpdate == "3")

    // Under useDefault an update continues from what it holds, above the newer row.
    let updated = try await notes[1].update { $0.text += "!" }
    #expect(updated == NoteV1(text: "b!"))
    #expect(notes[1].version == 4)
    #expect(await eventually { newNote.version == 4 }, "the newer build receives it")
    #expect(newNote.value == NoteV2(title: "b!", pinned: false))

    let rows = try await fixture.psql(
      "SELECT string_agg(version || ':' || schema_version, ',' ORDER BY version) FROM pld_values "
        + "WHERE key_hash = \(noteHash)")
    #expect(rows == "1:1,2:1,3:2,4:1", "every row is still there, as it was written")
    #expect(try await newNote.value(at: 3) == NoteV2(title: "c", pinned: true))
    for replica in olds + [newer, strict, lenient, forgiving] { await replica.shutDown() }
  }
}

// MARK: - Helpers

/// A replica writes while something happens to the server or its connections; the other observes.
enum Outage {
  /// Writes rounds 1, 2, 3 … to every key on `writer` (each key's value is the round, so it grows with the
  /// version) while `outage` runs (it is given the writer's values), then checks what `observer` saw:
  /// every replica ends on the server's latest version of every key, versions on the server are gap-free,
  /// observers saw strictly growing values, `changes(since: 0)` of the first key delivered each version
  /// once, in order, and a write made afterwards still reaches the observer.
  ///
  /// - Returns: How long after `outage` returned the observer held every version the server held then
  ///   (expected within 10 s); nil if it did not within 30 s.
  static func exercise(
    fixture: SharedFixture, writer a: Replica, observer b: Replica, keys: [String],
    outage: @Sendable (_ written: [SharedLiveData<Int>]) async throws -> Void
  ) async throws -> Duration? {
    var values: (onA: [SharedLiveData<Int>], onB: [SharedLiveData<Int>]) = ([], [])
    for key in keys {
      values.onA.append(try await a.store.liveData(key, default: 0))
      values.onB.append(try await b.store.liveData(key, default: 0))
    }
    let (onA, onB) = values
    let watch = await Watch(onB)
    let writer = LoopWriter(onA)
    let started = await eventually { onA[0].version >= 20 }
    #expect(started, "A writes before the outage")
    do {
      try await outage(onA)
    } catch {
      Issue.record(error, "the outage itself failed")
    }
    let ended = ContinuousClock.now
    let atEnd = try await FailureHelpers.stored(fixture)
    let behind = onB.map(\.version)
    // Waits longer than it expects, to tell a slow catch-up from none.
    let caughtUp = await eventually(.seconds(30)) {
      zip(keys, onB).allSatisfy { key, data in data.version >= atEnd[key]?.head ?? 0 }
    }
    let catchUp = caughtUp ? ended.duration(to: .now) : nil
    let took = catchUp.map { "\($0)" } ?? "over 30 s"
    let heads = keys.map { atEnd[$0]?.head ?? 0 }
    // The goal is 250 ms (the benchmark measures it); 10 s tells a slow catch-up on a loaded machine from
    // a stuck one. (With every suite running on two cores, a listener's attempts after the third restart
    // can run out of their deadlines and back off: 8.9 s was seen once, with nothing lost.)
    let bound = sanitizerScaled(.seconds(10))
    #expect(
      catchUp.map { $0 < bound } == true,
      "B holds what the server held after the outage within \(bound): took \(took) (B \(behind), server \(heads))"
    )
    let resumedAt = onA[0].version
    #expect(await eventually { onA[0].version >= resumedAt + 10 }, "A writes again after the outage")
    let rounds = await writer.stop()

    let stored = try await FailureHelpers.stored(fixture)
    for key in keys {
      guard let versions = stored[key] else {
        Issue.record("\(key) is not on the server")
        continue
      }
      #expect(versions.rows == versions.head, "\(key): one row per version, no gap")
      #expect(
        versions.lowest == 1 && versions.highest == versions.head, "\(key): versions 1 … \(versions.head)")
    }
    for (replica, values) in [("A", onA), ("B", onB)] {
      // Read the server again each time: a write the restart left in flight (and its caller gave up on)
      // may still commit after the snapshot above.
      let current = try await eventually(.seconds(5)) {
        let latest = try await FailureHelpers.stored(fixture)
        return zip(keys, values).allSatisfy { key, data in
          data.version == latest[key]?.head && "\(data.value)" == latest[key]?.latestPayload
        }
      }
      var detail = ""
      if !current {
        let latest = try await FailureHelpers.stored(fixture)
        let mine = zip(keys, values).map { key, data in
          let server = "\(latest[key]?.head ?? 0)/\(latest[key]?.latestPayload ?? "")"
          return "\(key) \(data.version)/\(data.value) server \(server)"
        }
        let later = try await eventually(.seconds(20)) {
          let latest = try await FailureHelpers.stored(fixture)
          return zip(keys, values).allSatisfy { key, data in data.version == latest[key]?.head }
        }
        let outcome = later ? "current within 20 s more" : "still behind 20 s later"
        detail = "\(mine.joined(separator: ", ")); \(outcome)"
      }
      #expect(current, "\(replica) ends on the latest version and value of every key: \(detail)")
    }
    for (index, key) in keys.enumerated() {
      let last = Int(stored[key]?.latestPayload ?? "")
      #expect(
        await eventually { watch.observed[index].all.last == last }, "\(key): B's observer got the last")
      let values = watch.observed[index].all
      #expect(
        zip(values, values.dropFirst()).allSatisfy(<), "\(key): no value delivered twice or out of order")
    }
    let head = stored[keys[0]]?.head ?? 0
    #expect(
      await eventually { watch.streamed.count >= Int(head) }, "changes(since: 0) reached the last version")
    let streamed = watch.streamed.all
    #expect(
      streamed.map(\.version) == Array(1...max(1, head)), "changes(since: 0): each version once, in order")
    #expect(zip(streamed, streamed.dropFirst()).allSatisfy { $0.value < $1.value })

    // Later writes still reach B (through a notification when its periodic catch-up is off).
    for (index, data) in onA.enumerated() {
      try await data.set(rounds + 1)
      #expect(
        await eventually(.seconds(3)) { onB[index].value == rounds + 1 }, "\(keys[index]): a later write")
    }
    #expect(await watch.stop(), "changes(since:) ends when its task is cancelled")
    #expect(watch.streamFailure.withLock { $0 } == nil)
    #expect(writer.unexpectedFailures.all.isEmpty, "only serverUnavailable or timedOut")
    #expect(a.isRunning, "A's run() survived: \(a.runOutcome.value ?? "")")
    #expect(b.isRunning, "B's run() survived: \(b.runOutcome.value ?? "")")
    return catchUp
  }
}

/// Writes rounds 1, 2, 3 … to each of its values in turn until stopped; failures of an outage are
/// counted and the loop goes on.
final class LoopWriter: Sendable {
  /// How many writes failed with serverUnavailable or timedOut.
  let outageFailures: Locked<Int>
  /// Every other failure.
  let unexpectedFailures: Recorder<String>
  private let stopping: Locked<Bool>
  private let task: Task<Int, Never>

  init(_ values: [SharedLiveData<Int>]) {
    let outageFailures = Locked(0)
    let unexpectedFailures = Recorder<String>()
    let stopping = Locked(false)
    self.outageFailures = outageFailures
    self.unexpectedFailures = unexpectedFailures
    self.stopping = stopping
    task = Task {
      var round = 0
      while !stopping.withLock({ $0 }) {
        round += 1
        for data in values {
          do {
            try await data.set(round)
          } catch let error as SharedStoreError where FailureHelpers.isOutage(error) {
            outageFailures.withLock { $0 += 1 }
          } catch {
            unexpectedFailures.append("\(error)")
          }
        }
      }
      return round
    }
  }

  /// Stops after the current round; returns the last round written.
  func stop() async -> Int {
    stopping.withLock { $0 = true }
    return await task.value
  }
}

/// What one replica's main-actor observers of its values, and `changes(since: 0)` of the first, deliver.
final class Watch: Sendable {
  /// The values each observer was given, in order.
  let observed: [Recorder<Int>]
  /// The versions `changes(since: 0)` of the first value delivered.
  let streamed: Recorder<Versioned<Int>>
  let streamFailure: Locked<String?>
  private let streamEnded: Locked<Bool>
  private let observers: [Observer<Int>]
  private let consumer: Task<Void, Never>

  init(_ values: [SharedLiveData<Int>]) async {
    let observed = values.map { _ in Recorder<Int>() }
    var observers: [Observer<Int>] = []
    for (data, recorder) in zip(values, observed) {
      observers.append(await FailureHelpers.record(data, into: recorder))
    }
    let streamed = Recorder<Versioned<Int>>()
    let streamFailure = Locked<String?>(nil)
    let streamEnded = Locked(false)
    self.observed = observed
    self.observers = observers
    self.streamed = streamed
    self.streamFailure = streamFailure
    self.streamEnded = streamEnded
    let stream = values.first?.changes(since: 0)
    consumer = Task {
      defer { streamEnded.withLock { $0 = true } }
      guard let stream else { return }
      do {
        for try await change in stream { streamed.append(change) }
      } catch {
        streamFailure.withLock { $0 = "\(error)" }
      }
    }
  }

  /// Removes the observers and cancels the consumer; returns whether the stream ended.
  func stop() async -> Bool {
    for observer in observers { observer.cancel() }
    consumer.cancel()
    return await eventually(.seconds(5)) { streamEnded.withLock { $0 } }
  }
}

/// The backends that listen for a fixture's notifications (`LISTEN "pld_changes"` is all they ever ran).
enum Listeners {
  /// Waits until as many connections listen on the fixture's database as there are `replicas`; when
  /// they do not, records an issue saying how many did and what each replica's `run()` ended with.
  static func expectListening(
    _ replicas: [Replica], _ fixture: SharedFixture, _ what: Comment,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let seen = Locked(0)
    let all = try await eventually {
      let count = try await pids(fixture).count
      seen.withLock { $0 = count }
      return count == replicas.count
    }
    let outcomes = replicas.map { $0.runOutcome.value ?? "running" }
    let logs = replicas.enumerated().map { "replica \($0.offset):\n\($0.element.log.last(20))" }
    let detail = logs.joined(separator: "\n")
    #expect(
      all, "\(what): \(seen.withLock { $0 }) of \(replicas.count) listen; run(): \(outcomes)\n\(detail)",
      sourceLocation: sourceLocation)
  }

  /// The listening connections' backends. psql runs on a thread of its own (``SharedFixture/psql(_:)``):
  /// polled every few milliseconds, it would otherwise hold a cooperative thread the replicas need.
  static func pids(_ fixture: SharedFixture) async throws -> Set<Int> {
    let text = try await fixture.psql(
      """
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'pld-listener'
      """)
    return Set(text.split(separator: "\n").compactMap { Int($0) })
  }

  /// The backends of the listening connections once exactly `count` listen. A replica's listener may be
  /// between two connections for a moment (the old backend still shown while it exits, the new one not
  /// yet connected), which a slow run (ThreadSanitizer) stretches; records an issue with what it last saw
  /// when that never settles.
  static func settled(
    _ fixture: SharedFixture, count: Int, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> Set<Int> {
    let seen = Locked<Set<Int>>([])
    let settled = try await eventually {
      let now = try await pids(fixture)
      seen.withLock { $0 = now }
      return now.count == count
    }
    let last = seen.withLock { $0 }
    #expect(settled, "\(count) listening connections: \(last)", sourceLocation: sourceLocation)
    return last
  }

  /// Terminates the given backends; returns how many were terminated.
  static func terminate(_ pids: Set<Int>, _ fixture: SharedFixture) async throws -> Int {
    let list = pids.map(String.init).joined(separator: ",")
    let text = try await fixture.psql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY('{\(list)}'::int[])")
    return text.split(separator: "\n").filter { $0 == "t" }.count
  }
}

/// Elements appended from any thread.
final class Recorder<Element: Sendable>: Sendable {
  private let elements = Locked<[Element]>([])

  func append(_ element: Element) { elements.withLock { $0.append(element) } }
  var all: [Element] { elements.withLock { $0 } }
  var count: Int { elements.withLock { $0.count } }
}

enum FailureHelpers {
  /// What the server holds of one key.
  struct StoredKey: Sendable {
    var head: Int64
    var rows: Int64
    var lowest: Int64
    var highest: Int64
    /// The JSON of the latest version.
    var latestPayload: String
  }

  /// Runs blocking work (pg_ctl) on a thread of its own, not on the cooperative pool.
  static func blocking<Result: Sendable>(
    _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
    }
  }

  /// Every key on the fixture's server (keys without "|" or newlines).
  static func stored(_ fixture: SharedFixture) async throws -> [String: StoredKey] {
    let text = try await fixture.psql(
      """
      SELECT h.key, h.version, count(v.version), coalesce(min(v.version), 0), coalesce(max(v.version), 0),
        coalesce(
          (SELECT l.payload FROM pld_values l WHERE l.key_hash = h.key_hash AND l.version = h.version), '')
      FROM pld_heads h LEFT JOIN pld_values v USING (key_hash) GROUP BY h.key_hash, h.key, h.version
      """)
    var stored: [String: StoredKey] = [:]
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
      guard fields.count == 6, let head = Int64(fields[1]), let rows = Int64(fields[2]),
        let lowest = Int64(fields[3]), let highest = Int64(fields[4])
      else {
        Issue.record("unexpected psql line \(line)")
        continue
      }
      stored[fields[0]] = StoredKey(
        head: head, rows: rows, lowest: lowest, highest: highest, latestPayload: fields[5])
    }
    return stored
  }

  /// Whether an error is one a server outage may cause.
  static func isOutage(_ error: SharedStoreError) -> Bool {
    switch error {
    case .serverUnavailable, .timedOut: true
    default: false
    }
  }

  /// Registers a main-actor observer that records every value it is given (not the current one).
  @MainActor static func record<Value: Sendable>(
    _ data: LiveData<Value>, into recorder: Recorder<Value>
  )
    -> Observer<Value>
  {
    data.observeForever(receiveCurrent: false) { recorder.append($0) }
  }

  /// Consumes `stream` until `count` versions arrived, it threw, or `limit` passed.
  static func collect<Value: Sendable>(
    _ stream: AsyncThrowingStream<Versioned<Value>, any Error>, count: Int,
    within limit: Duration = .seconds(10)
  ) async -> (versions: [Versioned<Value>], error: (any Error)?) {
    let received = Recorder<Versioned<Value>>()
    let failure = Locked<(any Error)?>(nil)
    let ended = Locked(false)
    let consumer = Task {
      defer { ended.withLock { $0 = true } }
      do {
        for try await change in stream {
          received.append(change)
          if received.count >= count { return }
        }
      } catch {
        failure.withLock { $0 = error }
      }
    }
    _ = await eventually(limit) { ended.withLock { $0 } }
    consumer.cancel()
    #expect(await eventually(.seconds(5)) { ended.withLock { $0 } }, "changes(since:) ends when cancelled")
    return (received.all, failure.withLock { $0 })
  }
}
