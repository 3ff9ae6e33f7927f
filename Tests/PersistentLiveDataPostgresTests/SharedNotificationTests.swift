import Foundation
import PLDTestSupport
import PersistentLiveData
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// How a replica tells the others of its commits: one statement per write while writes come one at a
/// time, one statement per interval gathering what committed meanwhile once they come faster, several
/// entries to a payload — and every key's newest version announced either way.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedNotificationTests {
  /// Each entry of each payload a raw connection heard on the store's channel.
  struct Heard: Sendable {
    let version: Int64
    let kind: String
    let name: String
  }

  /// Listens on the store's channel from a connection of its own, as another replica's listener does.
  final class Eavesdropper: Sendable {
    let payloads = Recorder<String>()
    private let replica: Replica
    private let task: Task<Void, any Error>

    init(_ fixture: SharedFixture) async throws {
      replica = fixture.replica(listening: false)
      let listening = Locked(false)
      let payloads = payloads
      task = Task { [replica] in
        try await replica.client.withConnection { connection in
          try await connection.listen(on: SharedDatabase.channel) { notifications in
            listening.withLock { $0 = true }
            for try await notification in notifications { payloads.append(notification.payload) }
          }
        }
      }
      #expect(await eventually { listening.withLock { $0 } }, "the eavesdropper listens")
    }

    /// The entries of every payload heard, after each one's format line (`pld-notify/2`).
    var entries: [Heard] {
      payloads.all.flatMap { payload in
        #expect(payload.hasPrefix(SharedNotification.Format.marker + "\n"), "\(payload)")
        // Lines of carried rows ("= …") belong to the entry above them.
        return payload.split(separator: "\n").dropFirst().filter { !$0.hasPrefix("= ") }.map { line in
          let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
          return Heard(
            version: parts.first.flatMap { Int64($0) } ?? -1, kind: parts.count > 2 ? String(parts[2]) : "",
            name: parts.count > 3 ? String(parts[3]) : "")
        }
      }
    }

    func stop() async {
      task.cancel()
      _ = await task.result
      await replica.shutDown()
    }
  }

  /// Eight tasks writing at once: fewer statements than writes (payloads of many entries), yet every
  /// key's last version is announced, no key's announcements go backwards, and another replica holding
  /// the keys — with no periodic catch-up to help it — is current on all of them.
  @Test func aBurstSharesStatementsAndStillAnnouncesEveryKeysNewestVersion() async throws {
    let fixture = try await SharedFixture()
    var quiet = PostgresStoreOptions()
    quiet.catchUpInterval = .seconds(600)
    let a = fixture.replica()
    let b = fixture.replica(options: quiet)
    let tasks = 8
    let keysPerTask = 5
    let rounds = 25
    let keys = (0..<tasks * keysPerTask).map { "burst-\($0)" }
    var observed: [SharedLiveData<Int>] = []
    for key in keys { observed.append(try await b.store.liveData(key, default: -1)) }
    let watched = observed
    try await Listeners.expectListening([a, b], fixture, "the replicas listen")
    let eavesdropper = try await Eavesdropper(fixture)
    var writers: [SharedLiveData<Int>] = []
    for key in keys { writers.append(try await a.store.liveData(key, default: -1)) }
    let all = writers

    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          for round in 0..<rounds {
            for slot in 0..<keysPerTask { try await all[task * keysPerTask + slot].set(round) }
          }
        }
      }
      try await group.waitForAll()
    }
    let writes = tasks * keysPerTask * rounds
    #expect(
      await eventually { watched.allSatisfy { $0.value == rounds - 1 } },
      "replica B is current on every key by notifications alone: \(watched.map(\.value))")
    #expect(watched.allSatisfy { $0.version == Int64(rounds) })
    // The last statement leaves up to an interval after the last commit.
    #expect(
      await eventually {
        let last = Dictionary(eavesdropper.entries.map { ($0.name, $0.version) }, uniquingKeysWith: max)
        return keys.allSatisfy { last[$0] == Int64(rounds) }
      }, "every key's last version is announced")

    let entries = eavesdropper.entries
    let payloads = eavesdropper.payloads.count
    #expect(payloads < writes / 2, "\(payloads) payloads for \(writes) writes: statements were shared")
    #expect(entries.allSatisfy { $0.kind == "k" && $0.version > 0 }, "every entry parses")
    for key in keys {
      let versions = entries.filter { $0.name == key }.map(\.version)
      #expect(versions.last == Int64(rounds), "\(key)'s last version was announced: \(versions)")
      #expect(zip(versions, versions.dropFirst()).allSatisfy(<), "\(key) never goes backwards: \(versions)")
    }
    TestFigures.record("POSTGRES burst-payloads=\(payloads) writes=\(writes) entries=\(entries.count)")
    await eavesdropper.stop()
    await a.shutDown()
    await b.shutDown()
  }

  /// Writes that come one at a time are each announced at once, in a payload of their own.
  @Test func writesOneAtATimeAreEachAnnouncedAlone() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    try await Listeners.expectListening([a], fixture, "the replica listens")
    let eavesdropper = try await Eavesdropper(fixture)
    let data = try await a.store.liveData("one-at-a-time", default: 0)
    let count = 12
    for value in 1...count {
      try await data.set(value)
      #expect(await eventually { eavesdropper.payloads.count == value }, "write \(value)")
      // Longer than the interval: the next write finds the notifier idle.
      try await Task.sleep(for: SharedNotifier.interval * 2)
    }
    // Each payload: the format line, the entry, and the row it committed (sent one at a time, it travels).
    let lines = eavesdropper.payloads.all.map { $0.split(separator: "\n") }
    #expect(lines.allSatisfy { $0.count == 3 }, "one entry per payload, with its row")
    #expect(
      lines.map { $0.last.map { String($0.split(separator: " ").last ?? "") } } == (1...count).map { "\($0)" }
    )
    #expect(eavesdropper.entries.map(\.version) == (1...Int64(count)).map { $0 })
    await eavesdropper.stop()
    await a.shutDown()
  }

  /// A key holding a newline, and one too long for a payload, are announced by their hash; another
  /// replica knows them by it and reads them at once, and a payload never exceeds what PostgreSQL takes.
  @Test func oddKeysAreAnnouncedByHashAndReachAnotherReplica() async throws {
    let fixture = try await SharedFixture()
    var quiet = PostgresStoreOptions()
    quiet.catchUpInterval = .seconds(600)
    let a = fixture.replica()
    let b = fixture.replica(options: quiet)
    let newline = "first line\n1 fake k other"
    let long = String(repeating: "é", count: 4_000)
    let ordinary = (0..<60).map { "ordinary-\($0)-" + String(repeating: "x", count: 200) }
    let names = [newline, long] + ordinary
    var observed: [SharedLiveData<Int>] = []
    for key in names { observed.append(try await b.store.liveData(key, default: 0)) }
    let watched = observed
    try await Listeners.expectListening([a, b], fixture, "the replicas listen")
    let eavesdropper = try await Eavesdropper(fixture)
    var writers: [SharedLiveData<Int>] = []
    for key in names { writers.append(try await a.store.liveData(key, default: 0)) }
    let all = writers
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, data) in all.enumerated() { group.addTask { try await data.set(index + 1) } }
      try await group.waitForAll()
    }
    #expect(
      await eventually {
        watched.enumerated().allSatisfy { $0.element.value == $0.offset + 1 }
      },
      "B read every key by its notification")
    #expect(await eventually { eavesdropper.entries.count >= names.count })
    let entries = eavesdropper.entries
    #expect(
      entries.filter { $0.kind == "h" }.map(\.name).sorted()
        == [KeyHash.of(newline), KeyHash.of(long)].sorted())
    #expect(Set(entries.filter { $0.kind == "k" }.map(\.name)) == Set(ordinary))
    #expect(eavesdropper.payloads.all.allSatisfy { $0.utf8.count <= SharedNotifier.payloadLimit })
    await eavesdropper.stop()
    await a.shutDown()
    await b.shutDown()
  }

  /// Gathering spaces a replica's statements by the replicas heard writing: 25 ms alone, 100 ms among
  /// four, never more than 250 ms; a replica silent for the window no longer counts.
  @Test func theIntervalGrowsWithTheReplicasHeardWriting() {
    #expect(SharedNotifier.interval(writers: 1) == .milliseconds(25))
    #expect(SharedNotifier.interval(writers: 4) == .milliseconds(100))
    #expect(SharedNotifier.interval(writers: 64) == SharedNotifier.longestInterval)
    let writers = WritingReplicas()
    let now = ContinuousClock.now
    #expect(writers.count(at: now) == 1, "this replica alone")
    for origin in ["a1", "b2", "c3", "a1"] { writers.heard("\(origin)"[...].utf8, at: now) }
    #expect(writers.count(at: now) == 4)
    writers.heard("b2"[...].utf8, at: now + .seconds(1))
    #expect(writers.count(at: now + WritingReplicas.window + .milliseconds(1)) == 2, "only b2 spoke lately")
    #expect(writers.count(at: now + .seconds(10)) == 1)
  }

  /// Two replicas writing at once: each hears the other, and counts two writers.
  @Test func replicasWritingAtOnceCountEachOther() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    try await Listeners.expectListening([a, b], fixture, "the replicas listen")
    let onA = try await a.store.liveData("writer-a", default: 0)
    let onB = try await b.store.liveData("writer-b", default: 0)
    for value in 1...5 {
      try await onA.set(value)
      try await onB.set(value)
    }
    #expect(await eventually { a.store.database.notifier.writers.count() == 2 })
    #expect(await eventually { b.store.database.notifier.writers.count() == 2 })
    await a.shutDown()
    await b.shutDown()
  }

  /// Packing entries: in order, each payload within the limit, none split, none empty.
  @Test func entriesArePackedIntoPayloadsWithinTheLimit() {
    let entries = (0..<500).map { "\($0) 5f3a k key-\($0)-" + String(repeating: "y", count: $0 % 97) }
    let payloads = SharedNotifier.payloads(entries)
    let marker = SharedNotification.Format.marker
    #expect(payloads.count > 1)
    #expect(payloads.allSatisfy { $0.utf8.count <= SharedNotifier.payloadLimit })
    #expect(payloads.allSatisfy { $0.hasPrefix(marker + "\n") && $0.count > marker.count + 1 })
    #expect(payloads.flatMap { $0.split(separator: "\n").dropFirst().map(String.init) } == entries)
    let longest = String(repeating: "z", count: SharedNotifier.longestEntry)
    #expect(
      SharedNotifier.payloads(["1 a k b", longest, "2 a k c"]) == [
        "\(marker)\n1 a k b", "\(marker)\n\(longest)", "\(marker)\n2 a k c",
      ])
    #expect(SharedNotifier.payloads([]).isEmpty)
    // The longest entry a store writes: the longest key named in full, the largest version and origin.
    let key = String(repeating: "k", count: SharedDatabase.longestNotifiedKey)
    let entry = SharedNotification(
      key: key, keyHash: KeyHash.of(key), version: .max, origin: String(UInt64.max, radix: 16)
    ).entry
    #expect(entry.utf8.count <= SharedNotifier.longestEntry)
  }
}

/// Reading the entries of a payload, as a listener does for every entry any replica sends.
@Suite struct NotificationEntryTests {
  @Test func entriesAreReadLineByLineAndMalformedOnesSkipped() {
    let payload = [
      "7 5f3a k flags", "12 5f3a h 0a1b", "3 other k key with spaces and é", "garbage", "x 5f3a k a",
      "99999999999999999999 5f3a k overflow", "5 5f3a q wrong-kind", "6 5f3a k", "8 5f3ak missing",
      " 5f3a k no-version", "9 5f3a k ",
    ].joined(separator: "\n")
    let entries = SharedNotification.Entry.all(in: Substring(payload))
    let read = entries.map { entry in
      "\(entry.version)|\(String(Substring(entry.origin)))|\(entry.isHash ? "h" : "k")|\(String(Substring(entry.name)))"
    }
    #expect(
      read == [
        "7|5f3a|k|flags", "12|5f3a|h|0a1b", "3|other|k|key with spaces and é", "9|5f3a|k|",
      ])
  }

  /// A payload's first line names its format: format 2 (this store's) and the unmarked format 1 are read
  /// alike; any other is not read at all — the listener catches up instead.
  @Test func aPayloadsFormatIsReadFromItsFirstLine() {
    func read(_ payload: String) -> String {
      switch SharedNotification.Format.read(payload) {
      case .entries(let entries):
        entries.map { "\($0.version) \(String(Substring($0.name)))" }.joined(separator: ",")
      case .unknown(let format): "unknown \(format)"
      }
    }
    #expect(SharedNotification.Format.marker == "pld-notify/2")
    #expect(read("pld-notify/2\n7 5f3a k flags\n8 5f3a k limits") == "7 flags,8 limits")
    #expect(read("7 5f3a k flags\n8 5f3a k limits") == "7 flags,8 limits", "format 1: no marker")
    #expect(read("pld-notify/3\n7 5f3a k flags") == "unknown pld-notify/3")
    #expect(read("pld-notify/3") == "unknown pld-notify/3")
    #expect(read("pld-notify/\n7 5f3a k flags") == "unknown pld-notify/")
    #expect(read("pld-notify/22\n7 5f3a k flags") == "unknown pld-notify/22")
    #expect(read("pld-notify/2") == "", "a marker alone: nothing")
  }

  /// What a store writes, a store reads back: every kind of key, in payloads packed as the notifier does.
  @Test func whatTheNotifierWritesTheListenerReadsBack() {
    let write = { (key: String, version: Int64) in
      SharedNotification(
        write: SharedWrite(key: key, keyHash: KeyHash.of(key), payload: "1", schemaVersion: 1),
        committed: CommittedVersion(
          key: key, version: version, writtenAtMilliseconds: 1_000, schemaVersion: 1, attribution: nil),
        origin: "abc123")
    }
    let keys = ["plain", "with space", "new\nline", String(repeating: "é", count: 4_000), "ünïcödé 🙂"]
    let notifications = keys.enumerated().map { write($0.element, Int64($0.offset + 1)) }
    let entries = SharedNotifier.payloads(notifications.map { $0.line(carryingRow: false) }).flatMap {
      payload -> [SharedNotification.Entry] in
      guard case .entries(let entries) = SharedNotification.Format.read(payload) else { return [] }
      return entries
    }
    #expect(entries.map(\.version) == [1, 2, 3, 4, 5])
    #expect(entries.allSatisfy { String(Substring($0.origin)) == "abc123" })
    #expect(entries.map(\.isHash) == [false, false, true, true, false])
    let names = entries.map { String(Substring($0.name)) }
    #expect(names == ["plain", "with space", KeyHash.of(keys[2]), KeyHash.of(keys[3]), "ünïcödé 🙂"])
  }
}

/// The one watcher of every call's deadline.
@Suite struct DeadlineTests {
  /// A shorter deadline added after a longer one fires at its own time, not the longer one's; a removed
  /// one never fires. (The bounds allow for a cooperative pool the whole suite keeps busy.)
  @Test func aShorterDeadlineAddedLaterFiresFirstAndARemovedOneNever() async throws {
    let deadlines = Deadlines()
    let fired = Recorder<String>()
    let now = ContinuousClock.now
    let long = deadlines.add(now + .seconds(600)) { fired.append("long") }
    let removed = deadlines.add(now + .milliseconds(50)) { fired.append("removed") }
    _ = deadlines.add(now + .milliseconds(100)) { fired.append("short") }
    deadlines.remove(removed)
    #expect(await eventually { fired.all == ["short"] }, "\(fired.all)")
    #expect(ContinuousClock.now - now < .seconds(300), "the short one did not wait for the long one")
    _ = deadlines.add(.now + .milliseconds(10)) { fired.append("later") }
    #expect(await eventually { fired.all == ["short", "later"] }, "\(fired.all)")
    deadlines.remove(long)
    try await Task.sleep(for: .milliseconds(200))
    #expect(fired.all == ["short", "later"], "each fired once, the removed ones never")
  }

  /// Deadlines that pass together fire in their order.
  @Test func deadlinesThatPassTogetherFireInOrder() async throws {
    let deadlines = Deadlines()
    let fired = Recorder<Int>()
    let now = ContinuousClock.now
    // Added latest first, all due a microsecond apart half a second from now: every add is done before
    // the watcher first wakes, and it wakes to several at once. (Already passed when added, as this test had them,
    // a watcher slowed down by ThreadSanitizer could wake between two adds and fire each alone: latest
    // first, in the order they were added.)
    for index in (0..<50).reversed() {
      _ = deadlines.add(now + .milliseconds(500) + .microseconds(index)) { fired.append(index) }
    }
    #expect(ContinuousClock.now - now < .milliseconds(500), "added before the first was due")
    #expect(await eventually { fired.count == 50 })
    #expect(fired.all == Array(0..<50))
  }

  /// Many calls at once from many tasks, most ending in time: exactly the others time out, once each.
  @Test func manyDeadlinesAtOnceFireExactlyThoseNotRemoved() async throws {
    let deadlines = Deadlines()
    let fired = Recorder<Int>()
    await withTaskGroup(of: Void.self) { group in
      for part in 0..<8 {
        group.addTask {
          for index in stride(from: part, to: 800, by: 8) {
            let id = deadlines.add(.now + .milliseconds(20 + index % 30)) { fired.append(index) }
            if index % 4 != 0 { deadlines.remove(id) }
            await Task.yield()
          }
        }
      }
    }
    let expected = stride(from: 0, to: 800, by: 4).map { $0 }
    #expect(await eventually { fired.count == expected.count }, "\(fired.count)")
    try await Task.sleep(for: .milliseconds(100))
    #expect(fired.all.sorted() == expected)
  }

  /// A call that outlives its timeout throws `timedOut` about then, not when the call ends.
  @Test func withDeadlineThrowsTimedOutWithoutWaitingForTheCall() async throws {
    let started = ContinuousClock.now
    do {
      let value = try await withDeadline(.milliseconds(100), operation: "slow") {
        try? await Task.sleep(for: .seconds(600))
        return 1
      }
      Issue.record("the slow call returned \(value)")
    } catch SharedStoreError.timedOut(let operation, let after) {
      #expect(operation == "slow" && after == .milliseconds(100))
    }
    #expect(ContinuousClock.now - started < .seconds(300), "the call itself would have taken 600 s")
    #expect(try await withDeadline(.seconds(5), operation: "fast") { 7 } == 7)
  }
}

/// A deadline whose expiry runs `action` (the tests' stand-in for a call's race).
private struct ExpiringAction: DeadlineExpiring {
  let action: @Sendable () -> Void
  func expire(with error: any Error) { action() }
}

extension Deadlines {
  /// ``add(_:race:operation:timeout:)`` of a deadline that runs `expire` when it passes.
  fileprivate func add(_ deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64
  {
    add(deadline, race: ExpiringAction(action: expire), operation: "test", timeout: .zero)
  }
}
