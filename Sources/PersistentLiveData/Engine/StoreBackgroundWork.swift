internal import Foundation

/// When a store's background work runs, on a serial queue of its own: the check for other connections'
/// commits (`applyExternalChanges()`) and the checkpoint once this store's writes pause
/// (`checkpointIfIdle()`).
///
/// - **Woken** (Linux): the ``FileChangeMonitor`` watches the store's `-wal` file (or, while it does not
///   exist, the store's folder) and wakes the store when the `-wal` is written, by any process. A wake-up
///   while a check is already queued adds nothing, so a burst of commits costs one check; the wake-ups of
///   this store's own commits are folded into one check a millisecond while it writes. The write of the WAL
///   frames comes *before* the commit is visible (the writer then syncs them and publishes the commit in the
///   `-shm`, which raises no event), so a check that finds nothing is repeated after 1, 2, 4 … 1,024 ms,
///   and one that found a commit after 1 and 2 ms (the commit that woke it may be a later one, not yet
///   visible; the whole series after the wake-up that ends a pause of the watch), unless a new wake-up
///   starts the series again. A slow poll (the *safety net*,
///   `StoreOptions.externalChangeSafetyNetInterval`) still runs, in case a notification is lost.
/// - **Polled**: where the file cannot be watched (not Linux, no inotify, the watch limit reached,
///   `StoreOptions.watchesStoreFiles` off, `PLD_DISABLE_FILE_WATCH=1`, the folder's watch lost), the
///   check runs every `StoreOptions.externalChangePollInterval`.
/// - **Checkpoints** do not ride on either: a commit that makes a checkpoint worthwhile arms a one-shot
///   timer, which checkpoints once writes have paused (or looks again after another pause). An idle
///   store has no checkpoint timer.
///
/// ```swift
/// let work = StoreBackgroundWork(
///   pollInterval: .milliseconds(50), safetyNetInterval: .seconds(1), checkpointPause: .milliseconds(20))
/// work.start(watching: path, watchesFiles: true, work: .init(check: check, checkpoint: checkpoint))
/// defer { work.cancel() }
/// ```
final class StoreBackgroundWork: Sendable {
  /// What runs in the background.
  struct Work: Sendable {
    /// Whether another connection committed since the last ``check`` (cheap; must not hold the store,
    /// which a woken check would otherwise keep alive right after the store's own commits).
    let hasNewCommit: @Sendable () -> Bool
    /// Looks for other connections' commits and delivers them (`applyExternalChanges()`); called only
    /// after ``hasNewCommit`` said there is one, so that no poll or wake-up holds the store for nothing.
    let check: @Sendable () -> Void
    /// Checkpoints if due; returns whether one is still pending (writes have not paused yet).
    let checkpoint: @Sendable () -> Bool
    /// ``hasNewCommit`` if the store's lock is free at once; nil while this store's own write holds it.
    /// A woken check asks this first, so that it never waits for the writer's lock: the writer would
    /// then have to wake it as it lets go (a system call and an inter-processor wake-up, measured at
    /// ~5 % of a small `.normal` `set` while a check per millisecond ran beside it).
    var hasNewCommitIfIdle: (@Sendable () -> Bool?)? = nil
  }

  /// How often each trigger ran the check, and whether the file is watched (for tests and the log).
  struct Statistics: Sendable, Equatable {
    var isWatching = false
    /// Whether the watch is on the `-wal` file itself rather than on the folder.
    var watchesFile = false
    /// Checks a wake-up or its follow-ups ran.
    var wokenChecks = 0
    /// Checks the repeating timer ran.
    var polls = 0
    /// How often either found another connection's commit and applied it (holding the store).
    var appliedChecks = 0
    /// Wake-ups that came while this store was writing and were folded into a deferred check.
    var deferredWakes = 0
  }

  private struct State {
    /// `nil` once cancelled: nothing runs after that.
    var work: Work?
    /// The monitor's token while the folder is watched.
    var watchToken: UInt64?
    var isCheckQueued = false
    /// Counts wake-ups: a follow-up check of an older one is dropped.
    var wakeGeneration: UInt64 = 0
    var isCheckpointArmed = false
    /// When this store last committed (`DispatchTime` uptime nanoseconds; 0: never).
    var lastOwnCommit: UInt64 = 0
    /// Whether a check deferred by ``wake()`` during this store's own writes is armed.
    var isDeferredCheckArmed = false
    /// Woken checks in a row that found the store's lock held by its own write and looked again later.
    var busyChecks = 0
    /// Whether the next series of checks runs whole even once a check finds a commit: a pause of the
    /// file's watch ended, and a commit whose frames it did not report may be published later.
    var thoroughSeries = false
    var statistics = Statistics()
  }

  private let queue = DispatchQueue(label: "PersistentLiveData.store")
  private let timer = Locked<(any DispatchSourceTimer)?>(nil)
  private let state = Locked(State())
  private let pollInterval: Duration
  private let safetyNetInterval: Duration
  private let checkpointPause: Duration

  init(pollInterval: Duration, safetyNetInterval: Duration, checkpointPause: Duration) {
    self.pollInterval = pollInterval
    self.safetyNetInterval = safetyNetInterval
    self.checkpointPause = checkpointPause
  }

  deinit {
    cancel()
  }

  /// Starts the work: woken by changes of `path`'s `-wal` if it can be watched (and `watchesFiles`),
  /// else polled.
  func start(watching path: String?, watchesFiles: Bool, work: Work) {
    state.withLock { $0.work = work }
    var isWatching = false
    if watchesFiles, let path, let monitor = FileChangeMonitor.shared {
      let wake: @Sendable () -> Void = { [weak self] in self?.wake() }
      let wakeAfterPause: @Sendable () -> Void = { [weak self] in self?.wake(thorough: true) }
      let lost: @Sendable () -> Void = { [weak self] in self?.watchLost() }
      // The -wal itself when it exists (the store's open connection keeps it): a folder watch costs
      // milliseconds to add in a folder of thousands of files.
      var watchesFile = true
      var watched = monitor.watch(file: path + "-wal", wake: wake, lost: lost, wakeAfterPause: wakeAfterPause)
      if case .failure = watched {
        watchesFile = false
        watched = monitor.watch(
          folder: POSIX.parentFolder(of: path), names: [POSIX.lastComponent(of: path) + "-wal"],
          wake: wake, lost: lost)
      }
      if case .success(let token) = watched {
        isWatching = state.withLock { state in
          guard state.work != nil else { return false }
          state.watchToken = token
          state.statistics.isWatching = true
          state.statistics.watchesFile = watchesFile
          return true
        }
        if !isWatching { monitor.stopWatching(token) }
      }
    }
    poll(every: isWatching ? max(safetyNetInterval, pollInterval) : pollInterval)
  }

  /// Stops everything: the watch, the poll, and any queued check or checkpoint. Idempotent.
  func cancel() {
    let token = state.withLock { state in
      state.work = nil
      defer { state.watchToken = nil }
      return state.watchToken
    }
    if let token { FileChangeMonitor.shared?.stopWatching(token) }
    timer.withLock { timer in
      timer?.cancel()
      timer = nil
    }
  }

  /// Runs `commit` with the kernel not reporting this store's writes to its `-wal`, when the store
  /// watches that file (``FileChangeMonitor/withWritesUnreported(_:_:)``); its watchers are woken once
  /// after.
  ///
  /// ```swift
  /// try work.withOwnWritesUnreported { try connection.commit() }
  /// ```
  func withOwnWritesUnreported<Result>(_ commit: () throws -> Result) rethrows -> Result {
    guard let monitor = FileChangeMonitor.shared,
      let token = state.withLock({ $0.statistics.watchesFile ? $0.watchToken : nil })
    else { return try commit() }
    return try monitor.withWritesUnreported(token, commit)
  }

  /// The monitor's token of this store's watch, while it watches (for tests and diagnostics).
  var watchToken: UInt64? { state.withLock { $0.watchToken } }

  /// The counts so far.
  var statistics: Statistics { state.withLock { $0.statistics } }

  /// Called by a commit that makes a checkpoint worthwhile (under the writer's lock: it only arms a
  /// timer): checkpoints once writes have paused for the checkpoint pause.
  func checkpointSoon() {
    let arm = state.withLock { state in
      guard state.work != nil, !state.isCheckpointArmed else { return false }
      state.isCheckpointArmed = true
      return true
    }
    guard arm else { return }
    queue.asyncAfter(deadline: .now() + Self.interval(checkpointPause)) { [weak self] in
      self?.runCheckpoint()
    }
  }

  // MARK: Triggers

  /// The delays of the follow-up checks after a wake-up whose checks find nothing: about two seconds in
  /// all, each a `PRAGMA data_version` of microseconds. A writer the machine descheduled between the
  /// first frames of its commit (which wake the watch) and the last outlasted half a second under the
  /// test suite's load, and its version waited for the safety net (or forever, without one).
  static let followUpDelays: [Duration] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024].map {
    .milliseconds($0)
  }

  /// How many follow-ups a series has once a check of it found a commit (1 and 2 ms later).
  static let followUpsAfterFinding = 2

  /// How long after this store's own commit a wake-up is deferred: its own writes wake the watch too,
  /// and a check per write would contend with the writer for the store's lock.
  static let ownWriteDeferralNanoseconds: UInt64 = 1_000_000

  /// How many woken checks in a row may find the lock held by this store's own write and look again a
  /// deferral later; the next one waits for the lock. So another process's commit during a long burst
  /// of this store's writes is found at most this many milliseconds later than without the skips. (A
  /// small `set` holds the lock about two thirds of the time: with 3, about a third of the checks during
  /// a burst still ended waiting, in a profile; with 10, a few in a hundred.)
  static let busyCheckLimit = 10

  /// Called after each commit of this store (under its lock: only records the time).
  func noteOwnCommit() {
    let now = DispatchTime.now().uptimeNanoseconds
    state.withLock { $0.lastOwnCommit = now }
  }

  /// A watched file was written: check soon, once for any number of wake-ups before the check runs.
  ///
  /// While this store writes (it committed less than ``ownWriteDeferralNanoseconds`` ago), the wake-ups
  /// its own commits cause are folded into one check that much later: a burst of writes costs a check
  /// per millisecond instead of one per write, and another process's commit in the burst is still found
  /// by that check, at most a millisecond later.
  private func wake(thorough: Bool = false) {
    let now = DispatchTime.now().uptimeNanoseconds
    let action = state.withLock { state -> (immediate: Bool, deferred: Bool) in
      state.wakeGeneration &+= 1
      if thorough { state.thoroughSeries = true }
      guard state.work != nil, !state.isCheckQueued else { return (false, false) }
      if state.lastOwnCommit != 0, now &- state.lastOwnCommit < Self.ownWriteDeferralNanoseconds {
        state.statistics.deferredWakes += 1
        guard !state.isDeferredCheckArmed else { return (false, false) }
        state.isDeferredCheckArmed = true
        return (false, true)
      }
      state.isCheckQueued = true
      return (true, false)
    }
    if action.deferred { runDeferredCheck() }
    guard action.immediate else { return }
    queue.async { [weak self] in
      guard let self else { return }
      let (work, generation) = state.withLock { state in
        state.isCheckQueued = false
        return (state.work, state.wakeGeneration)
      }
      runWokenCheck(work, generation: generation, followUp: 0)
    }
  }

  /// Runs a check for the wake-up `generation`, then schedules the next follow-up (the commit that woke
  /// it may not be visible yet; ``followUpsAfterFinding`` of them once the series found a commit, unless
  /// the series is thorough: woken at the end of a pause of the watch), unless a newer wake-up started
  /// its own series.
  private func runWokenCheck(
    _ work: Work?, generation: UInt64, followUp: Int, foundEarlier: Bool = false, thorough: Bool = false
  ) {
    guard let work else { return }
    let (waits, thorough) = state.withLock { state in
      state.statistics.wokenChecks += 1
      // A series starts: it takes the wake-up's thoroughness.
      defer { if followUp == 0 { state.thoroughSeries = false } }
      return (state.busyChecks >= Self.busyCheckLimit, thorough || (followUp == 0 && state.thoroughSeries))
    }
    let answer: Bool?
    if !waits, let ifIdle = work.hasNewCommitIfIdle {
      answer = ifIdle()
    } else {
      answer = work.hasNewCommit()
    }
    guard let found = answer else {
      // This store's own write holds the lock: look again a deferral later instead of waiting for it.
      let armed = state.withLock { state -> Bool in
        state.busyChecks += 1
        if thorough { state.thoroughSeries = true }  // for the series the deferred check starts
        guard !state.isDeferredCheckArmed else { return false }
        state.isDeferredCheckArmed = true
        return true
      }
      if armed { runDeferredCheck() }
      return
    }
    state.withLock { $0.busyChecks = 0 }
    if found {
      state.withLock { $0.statistics.appliedChecks += 1 }
      work.check()
    }
    // A series that found a commit is followed up briefly all the same: the commit that raised the
    // wake-up may be a later one, its frames written but not yet visible (frames written while the
    // watch was silenced by a pause of the monitor, most often).
    let seriesFound = found || foundEarlier
    let followUps = seriesFound && !thorough ? Self.followUpsAfterFinding : Self.followUpDelays.count
    guard followUp < followUps else { return }
    queue.asyncAfter(deadline: .now() + Self.interval(Self.followUpDelays[followUp])) { [weak self] in
      guard let self else { return }
      let work = state.withLock { $0.wakeGeneration == generation ? $0.work : nil }
      runWokenCheck(
        work, generation: generation, followUp: followUp + 1, foundEarlier: seriesFound, thorough: thorough)
    }
  }

  /// Runs a check ``ownWriteDeferralNanoseconds`` from now, for the newest wake-up by then (the caller
  /// armed it: `isDeferredCheckArmed`).
  private func runDeferredCheck() {
    queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.ownWriteDeferralNanoseconds))) {
      [weak self] in
      guard let self else { return }
      let (work, generation) = state.withLock { state in
        state.isDeferredCheckArmed = false
        return (state.work, state.wakeGeneration)
      }
      runWokenCheck(work, generation: generation, followUp: 0)
    }
  }

  /// The folder's watch ended (deleted, unmounted): poll at the fallback interval from now on.
  private func watchLost() {
    let isRunning = state.withLock { state in
      state.watchToken = nil
      state.statistics.isWatching = false
      return state.work != nil
    }
    guard isRunning else { return }
    poll(every: pollInterval)
    wake()
  }

  private func runCheckpoint() {
    let work = state.withLock { state in
      state.isCheckpointArmed = false
      return state.work
    }
    if work?.checkpoint() == true { checkpointSoon() }
  }

  /// (Re)schedules the repeating check.
  private func poll(every interval: Duration) {
    let nanoseconds = Self.interval(interval)
    timer.withLock { timer in
      // Never after cancel(), which stops the work before the timer.
      guard state.withLock({ $0.work != nil }) else { return }
      let isNew = timer == nil
      if isNew {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler { [weak self] in
          guard let self else { return }
          let work = state.withLock { state in
            state.statistics.polls += 1
            return state.work
          }
          guard let work, work.hasNewCommit() else { return }
          state.withLock { $0.statistics.appliedChecks += 1 }
          work.check()
        }
        timer = source
      }
      timer?.schedule(deadline: .now() + nanoseconds, repeating: nanoseconds, leeway: nanoseconds / 10)
      if isNew { timer?.resume() }
    }
  }

  /// `duration` as a dispatch interval, at least 1 ms.
  private static func interval(_ duration: Duration) -> DispatchTimeInterval {
    let nanoseconds =
      Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
    return .nanoseconds(max(1_000_000, nanoseconds))
  }
}

extension DispatchTimeInterval {
  /// A tenth of the interval (the timers' leeway).
  fileprivate static func / (interval: DispatchTimeInterval, divisor: Int) -> DispatchTimeInterval {
    guard case .nanoseconds(let nanoseconds) = interval else { return interval }
    return .nanoseconds(nanoseconds / divisor)
  }
}
