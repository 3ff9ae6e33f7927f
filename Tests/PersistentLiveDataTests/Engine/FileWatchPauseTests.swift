import Foundation
import PLDTestSupport
import Synchronization
import Testing

@testable import PersistentLiveData

private let canWatch = FileChangeMonitor.shared != nil
private let underSanitizer = ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] != nil

/// A second store of a file, beside its writer, that hears of writes by the file watch alone.
private func readOnlyNotifiedOptions() -> StoreOptions {
  var options = notifiedOnlyOptions()
  options.readOnly = true
  return options
}

/// How long a store of this process may take to hear of a write.
private let hearingLimit: Duration = .seconds(underSanitizer ? 20 : 5)

/// The pauses of the file watch: in a burst, after each read of the monitor, a `-wal` whose writes were
/// just reported is not watched for writes until reading resumes a millisecond later (each `write(2)` to a
/// watched file costs the writer a trip through the kernel's notification path); then every store of
/// the file is woken once.
@Suite(.ownThread, .serialized) struct FileWatchPauseTests {
  /// Writes 10 ms apart are each reported, with no pause of the watch; a burst of single `set`s (the
  /// `-wal`'s writes reported by three reads in a row) silences it pause after pause, and the burst's last
  /// writes fall into one. Another store of the file in this process gets the last write all the same — with a
  /// pause that ended without waking it, it would wait for the safety-net poll, a minute away — and
  /// once the pauses are over, one more write is reported by the kernel as before (a watch left silent
  /// would not report it, and the other store would not hear of it).
  @MainActor
  @Test(.enabled(if: canWatch))
  func aBurstOfWritesSilencesTheWatchBetweenReadsAndEveryStoreStillGetsTheLastOne() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("burst.db")
    let writer = try PersistentStore(path: path, options: notifiedOnlyOptions())
    let reader = try PersistentStore(path: path, options: readOnlyNotifiedOptions())
    let monitor = try #require(FileChangeMonitor.shared)
    let token = try #require(writer.database.backgroundWork?.watchToken)
    let written = try writer.liveData("counter", default: 0)
    let read = try reader.liveData("counter", default: 0)
    try await Task.sleep(for: .milliseconds(50))  // the opens' events are read

    // Writes 10 ms apart are no burst: each is reported, and the watch is never silenced.
    let pausesBefore = try #require(monitor.pausedReports(token))
    for value in 1...3 {
      try written.set(-value)
      try await Task.sleep(for: .milliseconds(10))
    }
    let lone = waitUntil(hearingLimit) { read.value == -3 }
    #expect(lone)
    #expect(monitor.pausedReports(token) == pausesBefore, "lone writes silenced the watch")

    // Writes back to back until the watch has been silenced (a loaded machine may take longer to read
    // three times in a row), then 20 ms more: most of a burst's time is spent in pauses.
    var count = 0
    var silenced: ContinuousClock.Instant?
    let start = ContinuousClock.now
    while ContinuousClock.now - (silenced ?? .now) < .milliseconds(20),
      ContinuousClock.now - start < hearingLimit
    {
      count += 1
      try written.set(count)
      if silenced == nil, (monitor.pausedReports(token) ?? 0) > pausesBefore { silenced = .now }
    }
    let caughtUp = waitUntil(hearingLimit) { read.value == count }
    #expect(caughtUp, "read \(read.value) of \(count)")
    #expect(read.version == written.version)
    #expect((monitor.pausedReports(token) ?? 0) > pausesBefore, "the watch was never silenced")
    #expect(reader.database.backgroundWork?.statistics.polls == 0)

    try await Task.sleep(for: .milliseconds(50))  // every pause is over
    let eventsBefore = try #require(monitor.reportedEvents(token))
    try written.set(-10)
    let heard = waitUntil(hearingLimit) { read.value == -10 }
    #expect(heard)
    #expect((monitor.reportedEvents(token) ?? 0) > eventsBefore, "the write after the burst was not reported")
    try writer.close()
    try reader.close()
  }

  /// While this process writes in a burst (its watch silenced most of the time), another
  /// process's writes still reach its store within milliseconds: each is found by the wake-up that ends
  /// the pause it fell into. Five writes of a child, 30 ms apart, each timed from its acknowledgement.
  @MainActor
  @Test(.enabled(if: canWatch))
  func anotherProcessesWritesArriveWhileThisProcessWritesWithoutABreak() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("busy.db")
    let store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    let own = try store.liveData("own", default: 0)
    let other = try store.liveData("other", default: 0)
    let monitor = try #require(FileChangeMonitor.shared)
    let token = try #require(store.database.backgroundWork?.watchToken)
    let pausesBefore = try #require(monitor.pausedReports(token))
    // Own writes 50 µs apart, on a thread of their own: a burst for the watch, with room for the child
    // to take SQLite's write lock between two of them.
    let stop = Atomic(false)
    let ownWrites = Atomic(0)
    let writer = Thread {
      while !stop.load(ordering: .relaxed) {
        if (try? own.set(ownWrites.load(ordering: .relaxed) + 1)) != nil {
          ownWrites.add(1, ordering: .relaxed)
        }
        usleep(50)
      }
    }
    writer.start()
    let child = try ChildProcess(ChildProcess.testChildPath, ["set-series", path, "other", "5", "30"])
    var latencies: [Duration] = []
    for version in 1...5 {
      #expect(child.readLine() == "ack \(version)")
      let acknowledged = ContinuousClock.now
      let arrived = waitUntil(hearingLimit) { other.version >= Int64(version) }
      #expect(arrived, "version \(version) never arrived")
      latencies.append(ContinuousClock.now - acknowledged)
    }
    child.wait()
    // A loaded machine may take longer to read three times in a row: the burst goes on until it has.
    _ = waitUntil(hearingLimit) { (monitor.pausedReports(token) ?? 0) > pausesBefore }
    stop.store(true, ordering: .relaxed)
    while !writer.isFinished { usleep(1_000) }
    latencies.sort()
    let median = latencies[latencies.count / 2]
    // Milliseconds, not the safety net's minute: each check the store's own writes hold off by a
    // millisecond, up to ten in a row (`StoreBackgroundWork.busyCheckLimit`), on a machine that runs the
    // rest of the suite beside it.
    #expect(median < (underSanitizer ? .milliseconds(500) : .milliseconds(100)), "latencies \(latencies)")
    #expect(other.value == 5)
    #expect(own.value == ownWrites.load(ordering: .relaxed))
    #expect((monitor.pausedReports(token) ?? 0) > pausesBefore, "the watch was never silenced")
    #expect(store.database.backgroundWork?.statistics.polls == 0)
    try store.close()
  }
}
