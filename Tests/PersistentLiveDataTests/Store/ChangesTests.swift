import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// What a consumer of `changes(since:)` saw before it stopped.
struct ConsumedChanges<Value: Sendable>: Sendable {
  var versions: [Versioned<Value>] = []
  var error: PersistentLiveDataError?
  var otherError: String?
  /// The sequence ended by itself (closed store, cancellation), not because `count` was reached.
  var ended = false
  var timedOut = false
}

/// Consumes `stream` on a task of its own until `count` versions arrived, it ends or throws, or
/// `timeout` passes (the consumer is then cancelled).
func consume<Value: Sendable>(
  _ stream: AsyncThrowingStream<Versioned<Value>, any Error>, count: Int, timeout: Duration = .seconds(30)
) async -> ConsumedChanges<Value> {
  let consumer = Task { () -> ConsumedChanges<Value> in
    var result = ConsumedChanges<Value>()
    do {
      for try await change in stream {
        result.versions.append(change)
        if result.versions.count == count { return result }
      }
      result.ended = true
    } catch let error as PersistentLiveDataError {
      result.error = error
    } catch {
      result.otherError = "\(error)"
    }
    return result
  }
  let fired = Locked(false)
  let watchdog = Task {
    try await Task.sleep(for: timeout)
    fired.withLock { $0 = true }
    consumer.cancel()
  }
  var result = await consumer.value
  watchdog.cancel()
  result.timedOut = fired.withLock { $0 }
  return result
}

extension Persistence {
  /// `changes(since:)` (the EveryVersion article): every version after `since`, stored ones first, then live ones, each once
  /// and in order, across processes; errors after everything before them.
  @Suite struct ChangesTests {
    @Test func sinceZeroReplaysTheKeptHistoryThenGoesLive() async throws {
      let store = try PersistentStore.inMemory()
      let count = try store.liveData("count", default: 0)
      for value in 1...3 { try count.set(value * 10) }

      let stream = count.changes(since: 0)
      let writer = Task.detached {
        try await Task.sleep(for: .milliseconds(50))
        try count.set(40)
        try count.set(50)
      }
      let result = await consume(stream, count: 5)
      try await writer.value

      #expect(result.versions.map(\.version) == [1, 2, 3, 4, 5])
      #expect(result.versions.map(\.value) == [10, 20, 30, 40, 50])
      #expect(result.error == nil && result.otherError == nil)
    }

    @Test func sinceTheCurrentVersionDeliversOnlyLaterVersions() async throws {
      let store = try PersistentStore.inMemory()
      let name = try store.liveData("name", default: "")
      try name.set("a")
      try name.set("b")

      let stream = name.changes(since: name.version)
      try name.set("c")
      let result = await consume(stream, count: 1)

      #expect(result.versions.map(\.version) == [3])
      #expect(result.versions.map(\.value) == ["c"])
      // writtenAt is the stored time of the version.
      #expect(try result.versions.first?.writtenAt == name.history(limit: 1).first?.writtenAt)
    }

    /// A writer racing the switch from replay to live: nothing lost, nothing doubled.
    @Test func aWriteRacingTheSwitchFromReplayToLiveIsNeitherLostNorDoubled() async throws {
      let folder = try TemporaryDirectory("changes")
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      for value in 1...100 { try count.set(value) }
      let writer = Thread {
        for value in 101...600 { _ = try? count.set(value) }
      }
      writer.start()
      let result = await consume(count.changes(since: 0), count: 600)

      #expect(result.versions.map(\.version) == Array(1...600))
      #expect(result.versions.map(\.value) == Array(1...600))
    }

    @Test func versionsOfATransactionArriveAfterItsCommitInOrder() async throws {
      let store = try PersistentStore.inMemory()
      let log = try store.liveData("log", default: [String]())
      let stream = log.changes(since: 0)
      try store.transaction {
        try log.update { $0.append("a") }
        try log.update { $0.append("b") }
      }
      let result = await consume(stream, count: 2)
      #expect(result.versions.map(\.value) == [["a"], ["a", "b"]])
    }

    @Test func threeWriterProcessesReachOneConsumerEveryVersionOnceInOrder() async throws {
      let folder = try TemporaryDirectory("changes")
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      let data = try store.liveData("events", default: Tagged(tag: "", seq: 0))
      let stream = data.changes(since: 0)
      let writers = try ["a", "b", "c"].map { tag in
        try ChildProcess(ChildProcess.testChildPath, ["write", path, "events", "300", "900", tag])
      }
      let result = await consume(stream, count: 900, timeout: .seconds(60))
      for writer in writers { writer.wait() }

      #expect(result.versions.map(\.version) == Array(1...900))
      // Each writer's own values arrive in its order: every version, none skipped.
      for tag in ["a", "b", "c"] {
        #expect(result.versions.map(\.value).filter { $0.tag == tag }.map(\.seq) == Array(1...300))
      }
    }

    @Test func cancellingTheConsumerEndsTheSequenceAndReleasesTheStore() async throws {
      weak var weakStore: PersistentStore?
      weak var weakData: PersistentLiveData<Int>?
      let consumer: Task<Int, any Error>
      do {
        let store = try PersistentStore.inMemory()
        let data = try store.liveData("n", default: 0)
        try data.set(1)
        weakStore = store
        weakData = data
        let stream = data.changes(since: 0)
        consumer = Task {
          var seen = 0
          for try await _ in stream { seen += 1 }
          return seen
        }
        try await Task.sleep(for: .milliseconds(50))
      }
      consumer.cancel()
      #expect(try await consumer.value == 1)
      // The sequence held the store while it ran; once it ended, nothing keeps it.
      try await Task.sleep(for: .milliseconds(20))
      #expect(weakStore == nil)
      #expect(weakData == nil)
    }

    @Test func closingTheStoreFinishesTheSequence() async throws {
      let store = try PersistentStore.inMemory()
      let data = try store.liveData("n", default: 0)
      try data.set(1)
      let stream = data.changes(since: 0)
      let closer = Task.detached {
        try await Task.sleep(for: .milliseconds(50))
        try store.close()
      }
      let result = await consume(stream, count: 10, timeout: .seconds(10))
      try await closer.value
      #expect(result.versions.map(\.version) == [1])
      #expect(result.ended && !result.timedOut && result.error == nil)
    }

    @Test func prunedVersionsThrowNamingKeySinceAndOldestKeptThenHistoryRecovers() async throws {
      let folder = try TemporaryDirectory("changes")
      let store = try PersistentStore(
        path: folder.path("store.db"), options: StoreOptions(retention: .last(3)))
      let data = try store.liveData("pruned", default: 0)
      for value in 1...10 { try data.set(value) }

      let result = await consume(data.changes(since: 2), count: 1)
      #expect(result.versions.isEmpty)
      #expect(result.error == .changesPruned(key: "pruned", since: 2, oldestKept: 8))
      #expect(result.error?.description.contains("history()") == true)

      // Recovery: history, then changes from its newest version.
      let kept = try data.history()
      #expect(kept.map(\.version) == [10, 9, 8])
      let stream = data.changes(since: kept[0].version)
      try data.set(11)
      let resumed = await consume(stream, count: 1)
      #expect(resumed.versions.map(\.version) == [11])
    }

    /// `since: 0` asks for the whole kept history: on a key whose first versions retention pruned it
    /// starts at the oldest version kept, without an error, then goes live. (A position of 1 or more
    /// behind the oldest kept is still a gap: the test above.)
    @Test func sinceZeroStartsAtTheOldestKeptVersionOfAPrunedKey() async throws {
      let folder = try TemporaryDirectory("changes")
      let store = try PersistentStore(
        path: folder.path("store.db"), options: StoreOptions(retention: .last(3)))
      let data = try store.liveData("pruned", default: 0)
      for value in 1...10 { try data.set(value) }
      var iterator = data.changes(since: 0).makeAsyncIterator()
      var delivered: [Int64] = []
      for _ in 0..<3 { delivered += try await iterator.next().map { [$0.version] } ?? [] }
      try data.set(11)
      let live = try await iterator.next()
      #expect(delivered == [8, 9, 10])
      #expect(live?.version == 11 && live?.value == 11)
    }

    /// A position newer than any version of the key — saved from another file, or from this one before
    /// it was restored from an older backup — throws `unknownVersion` at once instead of silently
    /// skipping the versions up to it. The current version itself is a valid position.
    @Test func aPositionNewerThanTheStoreHoldsThrowsUnknownVersion() async throws {
      let store = try PersistentStore.inMemory()
      let count = try store.liveData("count", default: 0)
      for value in 1...3 { try count.set(value) }

      var ahead = count.changes(since: 5).makeAsyncIterator()
      await #expect(throws: PersistentLiveDataError.unknownVersion(key: "count", version: 5)) {
        _ = try await ahead.next()
      }
      let never = try store.liveData("never", default: 0)
      var unwritten = never.changes(since: 1).makeAsyncIterator()
      await #expect(throws: PersistentLiveDataError.unknownVersion(key: "never", version: 1)) {
        _ = try await unwritten.next()
      }
      let current = count.changes(since: 3)
      try count.set(4)
      let result = await consume(current, count: 1)
      #expect(result.versions.map(\.version) == [4] && result.error == nil)
    }

    @Test func versionsPrunedWhileTheConsumerLagsThrowAfterEverythingBeforeThem() async throws {
      let folder = try TemporaryDirectory("changes")
      let store = try PersistentStore(path: folder.path("store.db"))
      let data = try store.liveData("lag", default: 0)
      for value in 1...3 { try data.set(value) }
      let stream = data.changes(since: 0)
      var iterator = stream.makeAsyncIterator()
      #expect(try await iterator.next()?.version == 1)
      // Versions 1 to 5 go (the tool's prune); the consumer had delivered 1 and read 2, 3 ahead.
      for value in 4...8 { try data.set(value) }
      #expect(try store.prune(key: "lag", keep: 3).deleted == 5)
      var delivered: [Int64] = []
      var caught: PersistentLiveDataError?
      do {
        while let change = try await iterator.next() { delivered.append(change.version) }
      } catch let error as PersistentLiveDataError {
        caught = error
      }
      #expect(delivered == [2, 3])
      #expect(caught == .changesPruned(key: "lag", since: 3, oldestKept: 6))
    }

    @Test func anUndecodableVersionIsAnErrorAfterEverythingBeforeIt() async throws {
      let store = try PersistentStore.inMemory()
      let data = try store.liveData("mixed", default: 0)
      try data.set(1)
      try data.set(2)
      #expect(try store.setJSON(Data("\"not a number\"".utf8), forKey: "mixed") == 3)
      #expect(try store.setJSON(Data("4".utf8), forKey: "mixed") == 4)

      let result = await consume(data.changes(since: 0), count: 4)

      #expect(result.versions.map(\.version) == [1, 2])
      guard case .undecodable(let key, let version, _) = result.error else {
        Issue.record("expected undecodable, got \(String(describing: result.error))")
        return
      }
      #expect(key == "mixed" && version == 3)
    }

    /// The "Every version, in order" article's resume pattern, as written there.
    @Test func resumingFromAStoredPositionAsTheArticleShows() async throws {
      let folder = try TemporaryDirectory("changes")
      let path = folder.path("store.db")
      var auditLog: [Versioned<String>] = []
      for run in 1...2 {
        let store = try PersistentStore(path: path)
        let settings = try store.liveData("settings", default: "")
        try settings.set("run \(run) a")
        try settings.set("run \(run) b")
        let position = try store.liveData("audit.position", default: Int64(0))
        var handled = 0
        for try await change in settings.changes(since: position.value) {
          auditLog.append(change)
          try position.set(change.version)
          handled += 1
          if handled == 2 { break }
        }
        try store.close()
      }
      #expect(auditLog.map(\.version) == [1, 2, 3, 4])
      #expect(auditLog.map(\.value) == ["run 1 a", "run 1 b", "run 2 a", "run 2 b"])
    }

    @Test func anotherProcessesWritesArriveWithoutAnyLiveObserver() async throws {
      let folder = try TemporaryDirectory("changes")
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      let data = try store.liveData("counter", default: 0)
      let stream = data.changes(since: 0)
      let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
      #expect(child.readLine() == "ack 1")
      child.wait()
      let result = await consume(stream, count: 1, timeout: .seconds(10))
      #expect(result.versions.map(\.value) == [42])
    }
  }
}
