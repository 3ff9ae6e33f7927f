import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// Whether this system has the file watcher (Linux with inotify, not turned off by the environment).
private let canWatch = FileChangeMonitor.shared != nil

/// Under a sanitizer everything runs several times slower; the bounds are about the store.
private let underSanitizer = ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] != nil

/// Options under which only a notification can deliver another process's write within the test: the
/// safety-net poll is a minute away.
func notifiedOnlyOptions() -> StoreOptions {
  var options = StoreOptions()
  options.externalChangeSafetyNetInterval = .seconds(60)
  options.verifiesIntegrityOnOpen = false
  return options
}

/// Waits (blocking this thread, not the main actor's queue) until `condition` holds or `limit` passes.
func waitUntil(_ limit: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
  let deadline = ContinuousClock.now + limit
  while !condition() {
    guard ContinuousClock.now < deadline else { return false }
    usleep(200)
  }
  return true
}

/// Runs a child that writes versions 1 … 5 of `key` to the store at `path`, `pauseMilliseconds` apart, and
/// returns how long each took from the child's acknowledgement until `version()` (this process's live
/// value) reached it; records an issue for a version that never arrives.
private func childWriteLatencies(
  path: String, key: String, pauseMilliseconds: Int, version: () -> Int64
) throws -> [Duration] {
  let child = try ChildProcess(
    ChildProcess.testChildPath, ["set-series", path, key, "5", "\(pauseMilliseconds)"])
  var latencies: [Duration] = []
  for written in 1...5 {
    #expect(child.readLine() == "ack \(written)")
    let acknowledged = ContinuousClock.now
    #expect(waitUntil { version() >= Int64(written) }, "version \(written) never arrived")
    latencies.append(ContinuousClock.now - acknowledged)
  }
  child.wait()
  return latencies
}

@Suite(.ownThread, .serialized) struct FileWatchTests {
  /// Five writes of a child, each timed from its acknowledgement to the moment this process's live value
  /// has it (watched from this thread: the store moves it without the main actor). The old polling
  /// took 25 ms on average and up to 50 ms.
  @MainActor
  @Test(.enabled(if: canWatch)) func anotherProcessesWriteWakesTheStoreWithinMilliseconds() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("woken.db")
    let store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    let counter = try store.liveData("counter", default: 0)
    let received = DeliveryRecorder<Int>()
    let observer = counter.observeForever(receiveCurrent: false, received.callback)
    defer { observer.cancel() }
    #expect(store.database.backgroundWork?.statistics.isWatching == true)

    let latencies = try childWriteLatencies(path: path, key: "counter", pauseMilliseconds: 30) {
      counter.version
    }.sorted()
    let median = latencies[latencies.count / 2]
    #expect(median < (underSanitizer ? .milliseconds(500) : .milliseconds(20)), "latencies \(latencies)")
    #expect((store.database.backgroundWork?.statistics.wokenChecks ?? 0) >= 1)
    #expect(store.database.backgroundWork?.statistics.polls == 0)

    // The main-actor observer gets the last version (earlier ones may be coalesced), once.
    let deadline = ContinuousClock.now + .seconds(5)
    while received.all.last != 5, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    let seen = received.takePending()
    #expect(seen.last == 5 && seen == seen.sorted() && Set(seen).count == seen.count, "\(seen)")
  }

  @MainActor
  @Test func withoutFileWatchingTheStorePollsAndStillDelivers() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("polled.db")
    var options = StoreOptions()
    options.watchesStoreFiles = false  // as where inotify is missing
    let store = try PersistentStore(path: path, options: options)
    let counter = try store.liveData("counter", default: 0)
    #expect(store.database.backgroundWork?.statistics.isWatching == false)

    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "7"])
    #expect(child.readLine() == "ack 1")
    let acknowledged = ContinuousClock.now
    #expect(waitUntil { counter.version >= 1 })
    let latency = ContinuousClock.now - acknowledged
    child.wait()
    #expect(counter.value == 7)
    #expect(latency < (underSanitizer ? .seconds(2) : .milliseconds(250)), "arrived after \(latency)")
    #expect((store.database.backgroundWork?.statistics.polls ?? 0) >= 1)
    #expect(store.database.backgroundWork?.statistics.wokenChecks == 0)
  }

  /// More stores than the per-user limit of inotify instances (128 by default): the process has one
  /// instance and one watch per folder, so all of them are woken.
  @MainActor
  @Test(.enabled(if: canWatch)) func twoHundredStoresInOneProcessAreAllWoken() async throws {
    let folder = try TemporaryDirectory()
    let paths = (0..<200).map { folder.path("store-\($0)/many.db") }
    let stores = try paths.map { try PersistentStore(path: $0, options: notifiedOnlyOptions()) }
    let values = try stores.map { try $0.liveData("counter", default: 0) }
    #expect(stores.allSatisfy { $0.database.backgroundWork?.statistics.isWatching == true })
    #expect((FileChangeMonitor.shared?.counts.folders ?? 0) >= 200)

    let child = try ChildProcess(
      ChildProcess.testChildPath, ["set-all", paths[0], "counter", "5"] + paths.dropFirst())
    #expect(child.readLine() == "done 200")
    child.wait()
    #expect(waitUntil(.seconds(30)) { values.allSatisfy { $0.version == 1 } })
    #expect(values.filter { $0.value != 5 }.isEmpty)
    #expect(stores.allSatisfy { ($0.database.backgroundWork?.statistics.wokenChecks ?? 0) >= 1 })
    for store in stores { try store.close() }
  }

  /// `census` opens 50 stores in 50 folders in a fresh child process and closes them: the watches go
  /// with the stores, the descriptors come back to what they were, and no thread stays per store.
  @Test(.enabled(if: canWatch)) func closingStoresLeavesNoWatchDescriptorOrThread() throws {
    let folder = try TemporaryDirectory()
    let child = try ChildProcess(ChildProcess.testChildPath, ["census", folder.path("census"), "50"])
    let line = child.readLine() ?? ""
    child.wait()
    let numbers = line.split(separator: " ").prefix(11).compactMap { Int($0) }
    try #require(numbers.count == 7, "census: \(line)")
    #expect(numbers[0] == 1, "one inotify instance for the whole process: \(line)")
    #expect(numbers[1] == 50, "one watch per folder while open: \(line)")
    #expect(numbers[2] == 0, "no watch left after close: \(line)")
    // Dispatch opens its own timerfd/eventfd/epoll descriptors lazily, so only files and inotify
    // instances count: a store that leaked would leave its database, -wal or -shm open.
    let added = line.split(separator: "[", maxSplits: 1).dropFirst().first.map {
      $0.dropLast().split(separator: ",").map(String.init)
    }
    let leaked = (added ?? []).filter { $0.hasPrefix("/") || $0 == "anon_inode:inotify" }
    #expect(added != nil, "census: \(line)")
    #expect(leaked.isEmpty, "descriptors left open: \(line)")
    #expect(numbers[4] <= numbers[3] + 1, "descriptors before and after: \(line)")
    // Dispatch keeps a pool of worker threads that grows and shrinks on its own; a thread per store
    // would add 50.
    #expect(numbers[6] < numbers[5] + 10, "threads before and after: \(line)")
  }

  @Test func environmentVariableMakesEveryStoreOfTheProcessPoll() throws {
    let folder = try TemporaryDirectory()
    let child = try ChildProcess(
      ChildProcess.testChildPath, ["census", folder.path("census"), "3"],
      environment: [FileChangeMonitor.disablingVariable: "1"])
    let line = child.readLine() ?? ""
    child.wait()
    #expect(line.hasPrefix("inotify 0 0 0 "), "census: \(line)")
  }

  /// SQLite truncates the `-wal` at a checkpoint(TRUNCATE) and deletes it when the last connection
  /// closes; the folder's watch sees the writes that follow either.
  @MainActor
  @Test(.enabled(if: canWatch)) func truncatedOrRecreatedWalStillWakesTheStore() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("wal.db")
    var store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    var counter = try store.liveData("counter", default: 0)

    try runChild(["set", path, "counter", "1"], expecting: "ack 1")
    #expect(waitUntil { counter.version == 1 })
    try runChild(["truncate", path], expecting: "truncated")
    #expect(fileSize(path + "-wal") == 0)
    try runChild(["set", path, "counter", "2"], expecting: "ack 2")
    #expect(waitUntil { counter.version == 2 })

    // The last connection closes: SQLite deletes the -wal; the next store creates it again.
    try store.close()
    #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    counter = try store.liveData("counter", default: 0)
    try runChild(["set", path, "counter", "3"], expecting: "ack 3")
    #expect(waitUntil { counter.version == 3 })
    #expect(counter.value == 3)
    try store.close()
  }

  /// Two stores in one folder share its watch; closing one leaves the other woken.
  @Test(.enabled(if: canWatch)) func storesSharingAFolderKeepTheirWakeUpsWhenOneCloses() throws {
    let folder = try TemporaryDirectory()
    let first = try PersistentStore(path: folder.path("first.db"), options: notifiedOnlyOptions())
    let second = try PersistentStore(path: folder.path("second.db"), options: notifiedOnlyOptions())
    let value = try second.liveData("counter", default: 0)
    try first.close()
    try runChild(["set", folder.path("second.db"), "counter", "9"], expecting: "ack 1")
    #expect(waitUntil { value.version == 1 })
    try second.close()
  }

  /// Each own commit wakes the store's background work (inotify does not say who wrote), but the check
  /// it runs reads `data_version` on the connection alone: it never holds the store, so releasing a
  /// store right after its own write closes the file at once, as before.
  @Test(.enabled(if: canWatch)) func ownCommitsWakeTheStoreButNeverMakeItHoldItself() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("own.db"), options: notifiedOnlyOptions())
    let count = try store.liveData("count", default: 0)
    for round in 1...50 { try count.set(round) }
    let statistics = { store.database.backgroundWork?.statistics ?? .init() }
    #expect(waitUntil(.seconds(5)) { statistics().wokenChecks >= 1 })
    usleep(600_000)  // the follow-ups of the last wake-up are over
    #expect(statistics().appliedChecks == 0, "\(statistics())")
    try store.close()
  }

  /// While the store writes, the wake-ups of its own commits are folded into one check a millisecond
  /// later instead of one check each (each took the store's lock from the writer), and another process's
  /// writes during such a burst still arrive within milliseconds. A store that checked on every own
  /// write fails the count; one that deferred checks while it keeps writing never gets the child's
  /// versions.
  @Test(.enabled(if: canWatch)) func ownWriteBurstsFoldTheirWakeUpsAndStillSeeOtherProcesses() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("burst.db")
    let store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    let own = try store.liveData("own", default: 0)
    let external = try store.liveData("external", default: 0)
    let statistics = { store.database.backgroundWork?.statistics ?? .init() }

    // Own writes, back to back, on another thread, until the child is done.
    let writing = Locked(true)
    let ownWrites = Locked(0)
    let writer = Thread {
      while writing.withLock({ $0 }) {
        if (try? own.set(own.value + 1)) != nil { ownWrites.withLock { $0 += 1 } }
      }
    }
    let started = ContinuousClock.now
    writer.start()
    // A warm-up, not a measure: under ThreadSanitizer on a loaded two-core machine 200 writes once took
    // over 5 s.
    #expect(waitUntil(.seconds(underSanitizer ? 60 : 5)) { ownWrites.withLock { $0 } >= 200 })

    let latencies = try childWriteLatencies(path: path, key: "external", pauseMilliseconds: 20) {
      external.version
    }.sorted()
    writing.withLock { $0 = false }
    while !writer.isFinished { usleep(1_000) }

    let median = latencies[latencies.count / 2]
    #expect(median < (underSanitizer ? .milliseconds(500) : .milliseconds(20)), "latencies \(latencies)")
    let writes = ownWrites.withLock { $0 }
    let counts = statistics()
    #expect(counts.deferredWakes > 0, "\(counts)")
    // About a check a millisecond at most (each pause of over a millisecond may add one, and the last
    // wake-up's follow-ups a few more), however many writes the burst made.
    let milliseconds = Int((ContinuousClock.now - started) / .milliseconds(1))
    #expect(
      counts.wokenChecks <= 2 * milliseconds + 20, "\(writes) own writes in \(milliseconds) ms, \(counts)")
    #expect(counts.appliedChecks >= 1, "\(counts)")
    try store.close()
  }

  // MARK: The fallback, without SQLite

  /// The path a store takes when its folder cannot be watched — `ENOSPC` at the user's watch limit
  /// (`fs.inotify.max_user_watches`), or here `ENOENT`: it polls at the fallback interval.
  @Test func aFolderThatCannotBeWatchedIsPolled() throws {
    let folder = try TemporaryDirectory()
    if let monitor = FileChangeMonitor.shared {
      let watched = monitor.watch(folder: folder.path("missing"), names: ["x"], wake: {}, lost: {})
      #expect(throws: POSIX.Failure.self) { try watched.get() }
    }
    let checks = Locked(0)
    let work = StoreBackgroundWork(
      pollInterval: .milliseconds(10), safetyNetInterval: .seconds(60), checkpointPause: .milliseconds(20))
    work.start(
      watching: folder.path("missing/store.db"), watchesFiles: true,
      work: .init(
        hasNewCommit: {
          checks.withLock { $0 += 1 }
          return false
        }, check: {}, checkpoint: { false }))
    #expect(work.statistics.isWatching == false)
    #expect(waitUntil(.seconds(5)) { checks.withLock { $0 } >= 3 })
    work.cancel()
    let afterCancel = checks.withLock { $0 }
    usleep(50_000)
    #expect(checks.withLock { $0 } <= afterCancel + 1)
  }

  /// A write to the watched name wakes the work, and a check that finds nothing is repeated (the
  /// commit may not be visible yet) 9 times, over about half a second; other names in the folder wake
  /// nothing; the folder deleted ends the watch, and the work polls from then on.
  @Test(.enabled(if: canWatch)) func writesWakeTheWorkAndALostWatchFallsBackToPolling() throws {
    let folder = try TemporaryDirectory()
    let watched = folder.path("watched")
    try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
    let checks = Locked(0)
    let work = StoreBackgroundWork(
      pollInterval: .milliseconds(10), safetyNetInterval: .seconds(60), checkpointPause: .milliseconds(20))
    defer { work.cancel() }
    work.start(
      watching: watched + "/store.db", watchesFiles: true,
      work: .init(
        hasNewCommit: {
          checks.withLock { $0 += 1 }
          return false  // never finds a commit: each wake-up is followed up
        }, check: {}, checkpoint: { false }))
    #expect(work.statistics.isWatching)

    try Data("other".utf8).write(to: URL(fileURLWithPath: watched + "/store.db-shm"))
    usleep(50_000)
    #expect(checks.withLock { $0 } == 0)
    try Data("frame".utf8).write(to: URL(fileURLWithPath: watched + "/store.db-wal"))
    let series = 1 + StoreBackgroundWork.followUpDelays.count
    #expect(waitUntil(.seconds(5)) { work.statistics.wokenChecks == series })
    usleep(300_000)
    #expect(work.statistics.wokenChecks == series)

    try FileManager.default.removeItem(atPath: watched)
    #expect(waitUntil(.seconds(5)) { !work.statistics.isWatching && work.statistics.polls >= 2 })
  }

  /// A `-wal` that exists is watched itself — adding that watch costs the same in a crowded folder —
  /// and its writes wake the work; other files of the folder wake nothing; the file deleted ends the
  /// watch, and the work polls from then on.
  @Test(.enabled(if: canWatch)) func anExistingWalIsWatchedItselfAndItsLossFallsBackToPolling() throws {
    let folder = try TemporaryDirectory()
    let wal = folder.path("store.db-wal")
    try Data().write(to: URL(fileURLWithPath: wal))
    let checks = Locked(0)
    let work = StoreBackgroundWork(
      pollInterval: .milliseconds(10), safetyNetInterval: .seconds(60), checkpointPause: .milliseconds(20))
    defer { work.cancel() }
    work.start(
      watching: folder.path("store.db"), watchesFiles: true,
      work: .init(
        hasNewCommit: {
          checks.withLock { $0 += 1 }
          return false
        }, check: {}, checkpoint: { false }))
    #expect(work.statistics.isWatching && work.statistics.watchesFile)

    try Data("other".utf8).write(to: URL(fileURLWithPath: folder.path("store.db-wal2")))
    usleep(50_000)
    #expect(checks.withLock { $0 } == 0)
    let handle = try #require(FileHandle(forWritingAtPath: wal))
    try handle.write(contentsOf: Data("frame".utf8))
    try handle.close()
    #expect(waitUntil(.seconds(5)) { work.statistics.wokenChecks >= 1 })

    try FileManager.default.removeItem(atPath: wal)
    #expect(waitUntil(.seconds(5)) { !work.statistics.isWatching && work.statistics.polls >= 2 })
  }

  /// A commit of many writes (a group commit, a transaction of sixteen keys) runs with the kernel not
  /// reporting its writes to the `-wal` — about two events per key, each a trip through the kernel for
  /// the writer — and then wakes every store of the file once: another store of this process gets all
  /// sixteen keys although the watch they share (a read-only store's, beside the writer) reported none
  /// of the commit's writes. A store whose
  /// commit is reported write by write fails the count; one that does not wake the others after never
  /// delivers (their safety-net poll is a minute away).
  @Test(.enabled(if: canWatch))
  func aLargeCommitIsUnreportedByTheWatchYetWakesEveryStoreOfTheFile() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("large.db")
    let writer = try PersistentStore(path: path, options: notifiedOnlyOptions())
    var readOnly = notifiedOnlyOptions()
    readOnly.readOnly = true  // a second store of the file in this process, beside its writer
    let reader = try PersistentStore(path: path, options: readOnly)
    let monitor = try #require(FileChangeMonitor.shared)
    #expect(writer.database.backgroundWork?.statistics.watchesFile == true)
    let token = try #require(writer.database.backgroundWork?.watchToken)
    let keys = (0..<16).map { "key-\($0)" }
    let written = try keys.map { try writer.liveData($0, default: 0) }
    let read = try keys.map { try reader.liveData($0, default: 0) }
    try await Task.sleep(for: .milliseconds(50))  // the opens' events are read (reading pauses 1 ms)

    let before = try #require(monitor.reportedEvents(token))
    try writer.transaction {
      for (index, value) in written.enumerated() { try value.set(index + 1) }
    }
    #expect(waitUntil(.seconds(underSanitizer ? 20 : 5)) { read.allSatisfy { $0.version == 1 } })
    #expect(read.map(\.value) == Array(1...16))
    try await Task.sleep(for: .milliseconds(50))
    #expect(monitor.reportedEvents(token) == before, "the commit's writes were reported")
    #expect(reader.database.backgroundWork?.statistics.polls == 0)

    // A single write is reported as before (turning the reports off and on would cost it more).
    try written[0].set(100)
    #expect(waitUntil(.seconds(underSanitizer ? 20 : 5)) { read[0].value == 100 })
    try await Task.sleep(for: .milliseconds(50))
    #expect((monitor.reportedEvents(token) ?? 0) > before)
    try writer.close()
    try reader.close()
  }

  /// After a commit that ran unreported, the watch reports writes again: another process's writes,
  /// made once the wake-up's follow-up checks are over, reach the store within milliseconds. A watch
  /// left silent would deliver them only at the safety-net poll, a minute away.
  @MainActor
  @Test(.enabled(if: canWatch))
  func afterAnUnreportedCommitOtherProcessesWritesWakeTheStoreAgain() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("reported-again.db")
    let store = try PersistentStore(path: path, options: notifiedOnlyOptions())
    let values = try (0..<16).map { try store.liveData("key-\($0)", default: 0) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for value in values { group.addTask { try await value.write(1) } }
      try await group.waitForAll()
    }
    try store.transaction { for value in values { try value.set(2) } }
    try await Task.sleep(for: .milliseconds(700))  // the follow-ups of the commit's wake-up are over

    let counter = try store.liveData("counter", default: 0)
    let latencies = try childWriteLatencies(path: path, key: "counter", pauseMilliseconds: 30) {
      counter.version
    }.sorted()
    let median = latencies[latencies.count / 2]
    #expect(median < (underSanitizer ? .milliseconds(500) : .milliseconds(20)), "latencies \(latencies)")
    #expect(store.database.backgroundWork?.statistics.polls == 0)
    try store.close()
  }

  /// A real store watches its own `-wal`, which its open connection keeps.
  @Test(.enabled(if: canWatch)) func aStoreWatchesItsWalFile() throws {
    let folder = try TemporaryDirectory()
    let store = try PersistentStore(path: folder.path("own.db"), options: notifiedOnlyOptions())
    #expect(store.database.backgroundWork?.statistics.watchesFile == true)
    try store.close()
  }

  @Test func backgroundCheckpointRunsOnceWritesPause() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("checkpoint.db")
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .normal))
    let value = try store.liveData("value", default: 0)
    for number in 1...(StoreDatabase.backgroundCheckpointCommits + 8) { try value.set(number) }
    // A checkpoint is pending after 32 commits; the one-shot timer runs it once writes have paused
    // (20 ms) and resets the schedule. Nothing else runs checkpoints: no polling does.
    #expect(
      waitUntil(.seconds(5)) {
        (try? store.database.withConnection { _, state in !state.checkpoints.isPending }) == true
      })
    try store.close()
  }

  private func runChild(_ arguments: [String], expecting line: String) throws {
    let child = try ChildProcess(ChildProcess.testChildPath, arguments)
    #expect(child.readLine() == line)
    child.wait()
  }

  private func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
  }
}
