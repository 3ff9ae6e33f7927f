import Foundation
import PLDTestSupport
import PersistentLiveDataTesting
import Testing

@testable import PersistentLiveData

/// A collection's `changes(since:)` and its checkpoints, and other processes' changes reaching a
/// collection: every version after a checkpoint, by any process, exactly once, in commit order.
@Suite struct CollectionChangesTests {
  /// "ID VERSION VALUE|nil" of a change of an Int collection, as the test child prints them.
  static func line(_ change: CollectionChange<Int>) -> String {
    "\(change.id) \(change.version) \(change.value.map(String.init) ?? "nil")"
  }

  /// Runs `pld-test-child MODE DB KEY ARGS…` to its end and returns its lines.
  static func child(_ arguments: [String]) async throws -> [String] {
    let child = try ChildProcess(ChildProcess.testChildPath, arguments)
    let (lines, killed) = await child.finish(within: .seconds(60))
    #expect(!killed && child.exitCode == 0, "\(arguments): \(lines) \(child.standardError)")
    return lines
  }

  @Test func firstEveryMemberThenEveryLaterChangeInCommitOrder() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("a.db"))
    let numbers = try store.collection("n", of: Int.self)
    try numbers.set(1, for: "b")
    try numbers.set(2, for: "a")
    try numbers.set(3, for: "b")
    try store.liveData("other", default: 0).set(9)  // not a member: never delivered

    let stream = numbers.changes(since: nil)
    let first = try await stream.next(2, timeout: .seconds(30))
    #expect(first.map(Self.line) == ["a 1 2", "b 2 3"], "every current member, its latest version, by id")

    try store.transaction {
      try numbers.set(4, for: "c")
      try numbers.set(5, for: "a")
    }
    try numbers.remove("b")
    try store.liveData("n/d", default: 0).set(6)  // a member written as a plain key
    let later = try await stream.next(4, timeout: .seconds(30))
    #expect(later.map(Self.line) == ["c 1 4", "a 2 5", "b 3 nil", "d 1 6"])
    #expect(later[2].value == nil && later[2].version == 3, "a removal: nil, at the version it took")
  }

  @Test func aCheckpointResumesInAnotherProcessWithEachChangeOnce() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    var saved: CollectionCheckpoint?
    do {
      let store = try PersistentStore(path: path)
      let numbers = try store.collection("n", of: Int.self)
      try numbers.set(1, for: "x")
      try numbers.set(1, for: "y")
      let stream = numbers.changes(since: nil)
      let seen = try await stream.next(2, timeout: .seconds(30))
      #expect(seen.map(Self.line) == ["x 1 1", "y 1 1"])
      try numbers.set(2, for: "x")
      saved = try await stream.next(1, timeout: .seconds(30)).last?.checkpoint
      try store.close()
    }
    // The program stopped; other processes write and remove members meanwhile.
    _ = try await Self.child(["set", path, "n/x", "3"])
    _ = try await Self.child(["set", path, "n/z", "1"])
    _ = try await Self.child(["remove", path, "n/y", "-"])
    _ = try await Self.child(["set", path, "n/y", "7"])
    _ = try await Self.child(["set", path, "plain", "1"])

    // A new process resumes from the saved checkpoint (JSON, as a program would keep it).
    let json = String(decoding: try JSONEncoder().encode(saved), as: UTF8.self)
    let lines = try await Self.child(["collection-changes", path, "n", json, "4"])
    #expect(Array(lines.prefix(4)) == ["x 3 3", "z 1 1", "y 2 nil", "y 3 7"])

    // And this process, from the checkpoint the child ended at: nothing again, then what comes next.
    let last = try JSONDecoder().decode(CollectionCheckpoint.self, from: Data(try #require(lines.last).utf8))
    let store = try PersistentStore(path: path)
    let numbers = try store.collection("n", of: Int.self)
    #expect(numbers.value == ["x": 3, "z": 1, "y": 7])
    let stream = numbers.changes(since: last)
    _ = try await Self.child(["set", path, "n/z", "2"])
    #expect(try await stream.next(1, timeout: .seconds(30)).map(Self.line) == ["z 2 2"])
  }

  @Test func aCheckpointTakenDuringTheFirstReadingResumesWithoutLossOrRepeat() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    let store = try PersistentStore(path: path)
    let numbers = try store.collection("n", of: Int.self)
    for id in ["a", "b", "c", "d"] { try numbers.set(1, for: id) }
    // Two members of the first reading delivered, then the consumer stops.
    let first = try await numbers.changes(since: nil).next(2, timeout: .seconds(30))
    #expect(first.map(Self.line) == ["a 1 1", "b 1 1"])
    let checkpoint = try #require(first.last?.checkpoint)
    // Meanwhile a delivered member and one still to read change, and a new one comes.
    try numbers.set(2, for: "a")
    try numbers.set(2, for: "c")
    try numbers.set(1, for: "e")
    try numbers.remove("d")
    let resumed = try await numbers.changes(since: checkpoint).next(3, timeout: .seconds(30))
    // "a" (delivered) comes from the log; "c" and "e" (not yet read) as they are now; "d" is gone.
    #expect(resumed.map(Self.line) == ["a 2 2", "c 2 2", "e 1 1"])
    // Then live, and nothing twice.
    let stream = numbers.changes(since: resumed.last?.checkpoint)
    try numbers.set(3, for: "b")
    #expect(try await stream.next(1, timeout: .seconds(30)).map(Self.line) == ["b 2 3"])
  }

  @Test func aCheckpointAheadOfTheFileIsRefused() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("a.db"))
    let numbers = try store.collection("n", of: Int.self)
    try numbers.set(1, for: "a")
    let future = CollectionCheckpoint(position: 1_000, after: nil)
    await #expect(throws: PersistentLiveDataError.unknownVersion(key: "n", version: 1_000)) {
      _ = try await numbers.changes(since: future).next(1, timeout: .seconds(30))
    }
  }

  @Test func prunedVersionsAreSkippedButNeverAMembersLatest() async throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("a.db"), options: StoreOptions(retention: .last(2)))
    let numbers = try store.collection("n", of: Int.self)
    try numbers.set(0, for: "a")
    let start = try await numbers.changes(since: nil).next(1, timeout: .seconds(30))
    for value in 1...40 { try numbers.set(value, for: "a") }
    let changes = try await numbers.changes(since: start.last?.checkpoint).next(1, timeout: .seconds(30))
    let kept = try store.liveData("n/a", default: 0).history().map(\.version)
    #expect(kept.contains(try #require(changes.first?.version)), "only kept versions are delivered")
    let all = try await numbers.changes(since: start.last?.checkpoint).next(kept.count, timeout: .seconds(30))
    #expect(all.last.map(Self.line) == "a 41 40", "the latest version is always delivered")
    #expect(all.map(\.version) == kept.reversed())
  }

  @Test @MainActor func aMemberWrittenByAnotherProcessReachesObserversValueAndChanges() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    let store = try PersistentStore(path: path)
    let numbers = try store.collection("n", of: Int.self)
    try numbers.set(1, for: "mine")
    let seen = Locked<[Int: [String: Int]]>([:])
    let owner = PlainOwner()
    numbers.observe(owner: owner) { members in seen.withLock { $0[members.count] = members } }
    let stream = numbers.changes(since: nil)
    #expect(try await stream.next(1, timeout: .seconds(30)).map(Self.line) == ["mine 1 1"])

    _ = try await Self.child(["set", path, "n/theirs", "5"])
    try await waitUntil(timeout: .seconds(20)) { numbers["theirs"] == 5 }
    try await waitUntil(timeout: .seconds(20)) { seen.withLock { $0[2] } == ["mine": 1, "theirs": 5] }
    #expect(try await stream.next(1, timeout: .seconds(30)).map(Self.line) == ["theirs 1 5"])

    _ = try await Self.child(["remove", path, "n/mine", "-"])
    try await waitUntil(timeout: .seconds(20)) { numbers["mine"] == nil }
    #expect(try await stream.next(1, timeout: .seconds(30)).map(Self.line) == ["mine 2 nil"])
    withExtendedLifetime(owner) {}
  }

  @Test func anotherProcesssChangeToOneMemberReadsOnlyThatMember() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    let store = try PersistentStore(path: path)
    let numbers = try store.collection("n", of: Int.self)
    try store.transaction {
      for index in 0..<2_000 { try numbers.set(index, for: "\(index)") }
    }
    let version = numbers.version
    _ = try await Self.child(["set", path, "n/7", "-7"])
    try await waitUntil(timeout: .seconds(20)) { numbers["7"] == -7 }
    #expect(numbers.version == version + 1 && numbers.value.count == 2_000)
    let statistics = store.database.externalCheckStatistics.withLock { $0 }
    #expect(statistics.lastKeysRead <= 1, "the change log named the one key: \(statistics)")
  }
}

extension CollectionChangesTests {
  /// The log keeps a row per member version still stored: the trim deletes those of pruned versions
  /// (never the newest row), and a checkpoint from before them still resumes.
  @Test func theTrimDeletesTheRowsOfPrunedVersionsAndCheckpointsStillResume() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(2)))
    let numbers = try store.collection("n", of: Int.self)
    try numbers.set(0, for: "a")
    let start = try #require(try await numbers.changes(since: nil).next(1, timeout: .seconds(30)).last)
    for value in 1...100 { try numbers.set(value, for: "a") }
    try numbers.remove("a")
    let rows = { try SQLiteCLI.query(path, "SELECT count(*) FROM pld_collection_log") }
    #expect(try rows() == "102")
    var position: Int64 = 0
    repeat {
      position = try store.database.withConnection { connection, _ in
        try StoreDatabase.trimCollectionLog(after: position, connection: connection)
      }
    } while position != 0
    #expect(try rows() == "1", "only the removal, the newest row, is left")
    let resumed = try await numbers.changes(since: start.checkpoint).next(1, timeout: .seconds(30))
    #expect(resumed.map(Self.line) == ["a 102 nil"])
    try numbers.set(7, for: "a")
    #expect(try SQLiteCLI.query(path, "SELECT max(seq) FROM pld_collection_log") == "103", "never reused")
  }
}
