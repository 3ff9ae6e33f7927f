import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// `removeKey`: every version deleted, the live value back to its default (notified), and version
/// numbers never reused — in this process, after a restart and in other processes.
@Suite struct RemoveKeyTests {
  @Test @MainActor func theLiveValueGoesBackToItsDefaultAndTheNextWriteContinuesAbove() async throws {
    let folder = try TemporaryDirectory("remove")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let session = try store.liveData("session", default: "signed out")
    let other = try store.liveData("other", default: 0)
    try other.set(7)
    for user in ["ada", "bob", "cy"] { try session.set(user) }
    var heard: [String] = []
    let observer = session.observeForever(receiveCurrent: false) { heard.append($0) }
    defer { observer.cancel() }

    try store.removeKey("session")
    #expect(session.value == "signed out" && session.version == 4, "the default, at the removal's version")
    for _ in 0..<1_000 where heard.isEmpty { await Task.yield() }
    #expect(heard == ["signed out"], "observers hear of the removal once")
    #expect(try store.keys() == ["other"])
    #expect(try session.history().isEmpty)
    #expect(try session.value(at: 3) == nil)
    #expect(throws: PersistentLiveDataError.unknownVersion(key: "session", version: 2)) {
      try session.rollback(to: 2)
    }
    #expect(other.value == 7 && other.version == 1, "other keys are untouched")

    try session.set("dee")
    #expect(session.version == 5, "numbers are never reused")
    try session.update { $0 += "!" }
    #expect(session.version == 6 && session.value == "dee!")
    #expect(try session.history().map(\.version) == [6, 5])
    try store.removeKey("nothing-here")  // never stored: nothing happens
    #expect(try store.keys() == ["other", "session"])
  }

  @Test func afterARestartARemovedKeyReadsAsItsDefaultAndWritesContinueAbove() throws {
    let folder = try TemporaryDirectory("remove")
    let path = folder.path("state.db")
    do {
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      for value in 1...5 { try count.set(value) }
      try store.removeKey("count")
      try store.close()
    }
    let store = try PersistentStore(path: path)
    let count = try store.liveData("count", default: 0)
    #expect(count.value == 0 && count.version == 6)
    try count.update { $0 += 1 }  // an update from the removal's version: no conflict loop
    #expect(count.value == 1 && count.version == 7)
    #expect(try count.history().map(\.version) == [7])
  }

  @Test func anUpdateRacingARemovalStartsAgainFromTheDefault() throws {
    let store = try PersistentStore.inMemory()
    let count = try store.liveData("count", default: 100)
    try count.set(1)
    var runs = 0
    try count.update { value in
      runs += 1
      if runs == 1 { try? store.removeKey("count") }  // a removal commits while the transform runs
      value += 1
    }
    #expect(runs == 2)
    #expect(count.value == 101 && count.version == 3, "computed again from the default at version 2")
  }

  @Test func aRemovalByAnotherProcessReachesThisOneAndItsWritesContinueAbove() async throws {
    let folder = try TemporaryDirectory("remove")
    let path = folder.path("state.db")
    let store = try PersistentStore(path: path)
    let count = try store.liveData("counter", default: 0)
    for value in 1...3 { try count.set(value) }
    let tool = try ChildProcess(
      ChildProcess.product("pld-tool"), ["delete", path, "counter"],
      mergingStandardError: true)
    tool.wait()
    #expect(tool.exitCode == 0, "\(tool.readAllLines())")
    let deadline = ContinuousClock.now + .seconds(10)
    while count.version < 4 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    #expect(count.value == 0 && count.version == 4)
    let writer = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
    writer.wait()
    #expect(writer.readAllLines() == ["ack 5"], "another process continues above the removal")
  }

  /// A consumer that had handled a version before the removal is told of the gap the removal made; one
  /// asking for the whole kept history (`since: 0`) starts after the removal.
  @Test func changesBehindARemovalEndWithChangesPruned() async throws {
    let store = try PersistentStore.inMemory()
    let log = try store.liveData("log", default: "")
    try log.set("a")
    try store.removeKey("log")
    try log.set("b")  // version 3: the gap before it is reported
    var iterator = log.changes(since: 1).makeAsyncIterator()
    await #expect(throws: PersistentLiveDataError.changesPruned(key: "log", since: 1, oldestKept: 3)) {
      _ = try await iterator.next()
    }
    var everything = log.changes(since: 0).makeAsyncIterator()
    let first = try await everything.next()
    #expect(first?.version == 3 && first?.value == "b")
  }

  /// `flush()` and `close()` from a transaction's or a `write`'s body are refused as `removeKey` is, with
  /// what to do, and the body's writes still commit (before, they failed as "locked by another
  /// connection" and as SQLite's misuse code).
  @Test func flushAndCloseInsideABodyAreRefusedClearly() async throws {
    let store = try PersistentStore.inMemory()
    let draft = try store.liveData("draft", default: "")
    #expect(throws: PersistentLiveDataError.notInTransaction(operation: "flush")) {
      try store.transaction {
        try draft.set("a")
        try store.flush()
      }
    }
    #expect(throws: PersistentLiveDataError.notInTransaction(operation: "close")) {
      try store.transaction { try store.close() }
    }
    let refusal = Locked<PersistentLiveDataError?>(nil)
    try await store.write {
      try draft.set("b")
      do {
        try store.close()
      } catch let error as PersistentLiveDataError {
        refusal.withLock { $0 = error }
      }
    }
    #expect(refusal.withLock { $0 } == .notInTransaction(operation: "close"))
    #expect(
      draft.value == "b" && draft.version == 1, "the write committed; the refused calls changed nothing")
    try store.flush()
    try store.close()
  }

  @Test func insideATransactionItIsRefusedAndChangesNothing() throws {
    let store = try PersistentStore.inMemory()
    let draft = try store.liveData("draft", default: "")
    try draft.set("text")
    #expect(throws: PersistentLiveDataError.notInTransaction(operation: "removeKey")) {
      try store.transaction { try store.removeKey("draft") }
    }
    #expect(draft.value == "text" && draft.version == 1)
    #expect(try store.keys() == ["draft"])
  }
}
