import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// A check woken by a write to the `-wal` asks for the store's lock without waiting while the store's
/// own write holds it (``StoreBackgroundWork/Work/hasNewCommitIfIdle``): the writer never has to wake a
/// check as it lets go of its lock. Another process's commit is still found, a few deferrals later.
@Suite(.enabled(if: FileChangeMonitor.shared != nil)) struct WokenCheckLockTests {
  /// What the two questions were asked, in order.
  private struct Calls {
    var idle = 0
    var waiting = 0
    /// How many times the idle question had been asked when the waiting one was first asked.
    var idleBeforeFirstWait: Int?
  }

  /// Starts background work on a folder's `store.db-wal` with the two questions given, wakes it once,
  /// and returns it with the calls recorded.
  private func wokenWork(
    in folder: TemporaryDirectory, idleAnswer: @escaping @Sendable () -> Bool?, calls: Locked<Calls>
  ) throws -> StoreBackgroundWork {
    let work = StoreBackgroundWork(
      pollInterval: .seconds(60), safetyNetInterval: .seconds(60), checkpointPause: .milliseconds(20))
    work.start(
      watching: folder.path("store.db"), watchesFiles: true,
      work: .init(
        hasNewCommit: {
          calls.withLock { calls in
            calls.waiting += 1
            if calls.idleBeforeFirstWait == nil { calls.idleBeforeFirstWait = calls.idle }
          }
          return false
        }, check: {}, checkpoint: { false },
        hasNewCommitIfIdle: {
          calls.withLock { $0.idle += 1 }
          return idleAnswer()
        }))
    #expect(work.statistics.isWatching)
    try Data("frame".utf8).write(to: URL(fileURLWithPath: folder.path("store.db-wal")))
    return work
  }

  /// While the lock is held, a woken check looks again a deferral later, `busyCheckLimit` times in a row;
  /// only then does one wait for the lock.
  @Test func aCheckWaitsForTheLockOnlyAfterTheLimitOfBusyLooks() throws {
    let folder = try TemporaryDirectory()
    defer { folder.remove() }
    let calls = Locked(Calls())
    let work = try wokenWork(in: folder, idleAnswer: { nil }, calls: calls)
    defer { work.cancel() }
    #expect(waitUntil(.seconds(5)) { calls.withLock { $0.waiting } >= 1 })
    #expect(calls.withLock { $0.idleBeforeFirstWait } == StoreBackgroundWork.busyCheckLimit)
  }

  /// A free lock answers at once: the whole series of a wake-up and its follow-ups never waits.
  @Test func aFreeLockIsNeverWaitedFor() throws {
    let folder = try TemporaryDirectory()
    defer { folder.remove() }
    let calls = Locked(Calls())
    let work = try wokenWork(in: folder, idleAnswer: { false }, calls: calls)
    defer { work.cancel() }
    let series = 1 + StoreBackgroundWork.followUpDelays.count
    #expect(waitUntil(.seconds(5)) { work.statistics.wokenChecks == series })
    #expect(calls.withLock { $0.idle } == series)
    #expect(calls.withLock { $0.waiting } == 0)
  }

  /// Against a real store: another process commits while this store writes without a pause; the
  /// store's checks, which look without waiting while its writes hold the lock, still find that commit
  /// and deliver it during the burst.
  @Test func anotherProcessesCommitDuringABurstOfOwnWritesIsDelivered() throws {
    let folder = try TemporaryDirectory()
    defer { folder.remove() }
    let path = folder.path("store.db")
    var options = StoreOptions(durability: .normal)
    options.externalChangeSafetyNetInterval = .seconds(60)
    let store = try PersistentStore(path: path, options: options)
    let mine = try store.liveData("mine", default: 0)
    let theirs = try store.liveData("theirs", default: 0)
    #expect(store.database.backgroundWork?.statistics.isWatching == true)

    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "theirs", "7"])
    let deadline = ContinuousClock.now + .seconds(20)
    var written = 0
    while theirs.version < 1, ContinuousClock.now < deadline {
      written += 1
      try mine.set(written)
    }
    #expect(child.readLine() == "ack 1")
    child.wait()
    #expect(theirs.value == 7, "not delivered during \(written) own writes")
    #expect(mine.version == Int64(written))
    try store.close()
  }
}
