internal import Foundation

/// Wakes stores when a file they care about is written, by any process: one inotify instance for the
/// whole process (Linux), one watch per watched file or folder, shared by every store that watches it.
///
/// A store watches its `-wal` file itself (``watch(file:wake:lost:)``) when it exists: SQLite deletes a
/// database's `-wal` only when its last connection closes, so while the store's connection is open —
/// read-write or read-only — the file and its watch last, and adding the watch costs the same in any
/// folder. Where the `-wal` does not exist (yet), the store watches its folder
/// (``watch(folder:names:wake:lost:)``), which also sees a `-wal` created later under the same name; adding
/// a folder watch walks the entries the kernel has cached for the folder, milliseconds for thousands of
/// files. The `-wal` is written with `write(2)`, so every commit raises `IN_MODIFY` (the `-shm` is mapped
/// into memory and raises nothing).
///
/// Limits (per user, `sysctl fs.inotify`): `max_user_instances` (128 by default) counts instances — this
/// process uses one, whatever the number of stores; `max_user_watches` (8,192 on older kernels, more on
/// newer ones) counts watches — one per distinct folder. When the instance cannot be created, or a
/// folder cannot be watched (`ENOSPC` at the watch limit), ``watch(folder:names:wake:lost:)`` fails
/// and the store polls instead.
///
/// Events are read on a queue of the monitor; after each read, reading pauses for
/// ``readPause`` so that a burst of commits (this process's own included) costs one wake-up per store.
/// In a burst (a file's writes reported by three reads in a row), the pause also stops the watch
/// reporting that file's writes (each `write(2)` to a watched file costs the writer the kernel's
/// notification path, a few per commit); when it ends, the file is watched again and every watcher of
/// it woken once, to find what was committed meanwhile.
///
/// ```swift
/// if let monitor = FileChangeMonitor.shared,
///   case .success(let token) = monitor.watch(
///     folder: "/var/app", names: ["state.db-wal"], wake: { check() }, lost: { poll() })
/// {
///   defer { monitor.stopWatching(token) }
/// }
/// ```
final class FileChangeMonitor: Sendable {
  /// The process's monitor, created at first use; `nil` where inotify is missing (not Linux, no inotify
  /// in the kernel, the instance limit reached) or turned off with the environment variable
  /// ``disablingVariable`` set to `1`.
  static let shared: FileChangeMonitor? = {
    guard ProcessInfo.processInfo.environment[disablingVariable] != "1" else { return nil }
    return FileChangeMonitor()
  }()

  /// `PLD_DISABLE_FILE_WATCH=1` in the environment (read once, when the first store opens) makes every
  /// store of the process poll, as where inotify is missing.
  static let disablingVariable = "PLD_DISABLE_FILE_WATCH"

  /// How long reading pauses after each batch of events: the most a wake-up can be delayed by the one
  /// before it, and the least time between two wake-ups of a store.
  static let readPause: DispatchTimeInterval = .milliseconds(1)

  /// ``burstReads`` reads in a row that report a file's writes, each within this many nanoseconds of
  /// the one before, make a burst: from then on each pause stops the watch reporting the file's writes
  /// until it ends. (One commit's writes can span two reads: the first write is read at once.)
  static let burstWindow: UInt64 = 3_000_000
  static let burstReads = 3

  /// A store's interest in one file, or in some files of one folder.
  struct Watcher {
    /// The names of the folder's files whose writes wake; nil for a file's own watch (every event).
    let names: Set<String>?
    let wake: @Sendable () -> Void
    /// The wake-up at the end of a pause that silenced the file's watch (``resumeReports()``).
    let wakeAfterPause: @Sendable () -> Void
    let lost: @Sendable () -> Void
  }

  /// Watches and who asked for them; guarded by `registry`'s lock, which never runs a store's code.
  struct Registry {
    /// By inotify watch: the watchers of that file or folder, by token.
    var folders: [Int32: [UInt64: Watcher]] = [:]
    /// The watch of each token.
    var watchOfToken: [UInt64: Int32] = [:]
    /// The path of each file watch (a folder's watch has none).
    var fileOfWatch: [Int32: String] = [:]
    /// File watches whose writes are not reported now, with how many commits are running on them.
    var unreportedWrites: [Int32: Int] = [:]
    /// File watches whose writes are not reported until the running pause of reading ends.
    var pausedWrites: Set<Int32> = []
    /// How many pauses each watch spent not reporting writes (for tests and diagnostics).
    var pauses: [Int32: Int] = [:]
    /// When each watch's writes were last reported (uptime nanoseconds), and by how many reads in a
    /// row (each within ``burstWindow`` of the one before).
    var lastReported: [Int32: (time: UInt64, reads: Int)] = [:]
    /// How many events each watch has reported so far.
    var reportedEvents: [Int32: Int] = [:]
    var nextToken: UInt64 = 1

    /// Forgets `watch`, which the kernel no longer has; returns its watchers.
    mutating func remove(_ watch: Int32) -> [UInt64: Watcher]? {
      fileOfWatch[watch] = nil
      unreportedWrites[watch] = nil
      reportedEvents[watch] = nil
      pausedWrites.remove(watch)
      pauses[watch] = nil
      lastReported[watch] = nil
      return folders.removeValue(forKey: watch)
    }

    /// Whether the kernel is to report the writes of `watch`: no commit of ``withWritesUnreported`` runs
    /// on it, and no pause of reading has silenced it.
    func reportsWrites(_ watch: Int32) -> Bool {
      unreportedWrites[watch] == nil && !pausedWrites.contains(watch)
    }
  }

  #if os(Linux)
  private let descriptor: Int32
  private let queue = DispatchQueue(label: "PersistentLiveData.file-changes")
  private let source: Locked<(any DispatchSourceRead)?>
  /// Guarded by its lock, which never runs a store's code.
  let registry = Locked(Registry())

  private init?() {
    guard case .success(let descriptor) = POSIX.Inotify.create() else { return nil }
    self.descriptor = descriptor
    let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
    self.source = Locked(source)
    // The monitor lives as long as the process: the handler needs no weak reference.
    source.setEventHandler { [self] in readAndDispatch() }
    source.resume()
  }
  #else
  private init?() { return nil }
  #endif

  /// Calls `wake` (on the monitor's queue; it must return quickly) whenever a file of `folder` whose
  /// name is in `names` is written, by this process or another, and `lost` once if the watch ends
  /// without ``stopWatching(_:)`` (the folder deleted or unmounted).
  ///
  /// ```swift
  /// let token = try monitor.watch(folder: folder, names: ["state.db-wal"], wake: wake, lost: lost).get()
  /// ```
  /// - Returns: A token for ``stopWatching(_:)``, or why the folder cannot be watched (`ENOSPC`: the
  ///   user's `fs.inotify.max_user_watches` is reached).
  func watch(
    folder: String, names: Set<String>, wake: @escaping @Sendable () -> Void,
    lost: @escaping @Sendable () -> Void
  ) -> Result<UInt64, POSIX.Failure> {
    #if os(Linux)
    register(Watcher(names: names, wake: wake, wakeAfterPause: wake, lost: lost)) {
      POSIX.Inotify.addWatch(descriptor, folder: folder)
    }
    #else
    .failure(POSIX.Failure(operation: "inotify", code: 0))
    #endif
  }

  /// Calls `wake` (on the monitor's queue; it must return quickly) whenever `file` is written, by this
  /// process or another, and `lost` once if the watch ends without ``stopWatching(_:)`` (the file
  /// deleted, its file system unmounted). When a pause of reading that silenced the watch ends, calls
  /// `wakeAfterPause` instead (`wake` when nil): a commit whose frames it did not report may be
  /// published only after the check it causes.
  ///
  /// ```swift
  /// let token = try monitor.watch(file: "/var/app/state.db-wal", wake: wake, lost: lost).get()
  /// ```
  /// - Returns: A token for ``stopWatching(_:)``, or why the file cannot be watched (`ENOENT`: it does
  ///   not exist; `ENOSPC`: the user's `fs.inotify.max_user_watches` is reached).
  func watch(
    file: String, wake: @escaping @Sendable () -> Void, lost: @escaping @Sendable () -> Void,
    wakeAfterPause: (@Sendable () -> Void)? = nil
  ) -> Result<UInt64, POSIX.Failure> {
    #if os(Linux)
    register(Watcher(names: nil, wake: wake, wakeAfterPause: wakeAfterPause ?? wake, lost: lost), file: file)
    {
      POSIX.Inotify.addWatch(descriptor, file: file)
    }
    #else
    .failure(POSIX.Failure(operation: "inotify", code: 0))
    #endif
  }

  #if os(Linux)
  /// Adds the watch `add` makes (under the registry's lock, so that a watch removed by stopWatching
  /// cannot be re-added halfway) and records `watcher` for it.
  private func register(
    _ watcher: Watcher, file: String? = nil, _ add: () -> Result<Int32, POSIX.Failure>
  ) -> Result<UInt64, POSIX.Failure> {
    registry.withLock { registry in
      add().map { watch in
        let token = registry.nextToken
        registry.nextToken += 1
        registry.folders[watch, default: [:]][token] = watcher
        registry.watchOfToken[token] = watch
        if let file { registry.fileOfWatch[watch] = file }
        return token
      }
    }
  }
  #endif

  /// Runs `commit` — a commit of the store that holds `token` — with the kernel not reporting the
  /// writes to the file `token` watches, then wakes every watcher of that file once, as one event would.
  ///
  /// A commit writes its pages to the `-wal` one `write(2)` at a time: a group commit of sixteen keys
  /// makes some forty, and each one's event cost the committing thread a trip through the kernel's
  /// notification path and woke this monitor's queue. Another process cannot write the `-wal` while the
  /// commit holds SQLite's write lock; in the moment between that lock's release and the watch reporting
  /// again, it can: the wake-up after the commit makes every watcher check once more (the committing
  /// store a millisecond later, as for its own events), which finds such a commit. A folder's watch, a
  /// file replaced since it was watched, or no watch: `commit` runs as it is.
  ///
  /// ```swift
  /// try monitor.withWritesUnreported(token) { try connection.commit() }
  /// ```
  func withWritesUnreported<Result>(_ token: UInt64, _ commit: () throws -> Result) rethrows -> Result {
    #if os(Linux)
    let muted = registry.withLock { registry -> Int32? in
      guard let watch = registry.watchOfToken[token], let file = registry.fileOfWatch[watch] else {
        return nil
      }
      let running = registry.unreportedWrites[watch, default: 0]
      if registry.reportsWrites(watch) {
        guard let answered = POSIX.Inotify.setWatch(descriptor, file: file, reportingWrites: false) else {
          return nil
        }
        guard answered == watch else {
          undoSetWatch(answered, file: file, registry: registry)
          return nil
        }
      }
      registry.unreportedWrites[watch] = running + 1
      return watch
    }
    guard let muted else { return try commit() }
    defer { reportWritesAgain(muted) }
    return try commit()
    #else
    try commit()
    #endif
  }

  #if os(Linux)
  /// The end of a commit of ``withWritesUnreported(_:_:)``: the last one running on `watch` makes the
  /// kernel report writes again; every watcher of the file is woken.
  private func reportWritesAgain(_ watch: Int32) {
    let wakes = registry.withLock { registry -> [@Sendable () -> Void] in
      // Gone meanwhile (the file deleted, the last watcher stopped): nothing to restore or wake.
      guard let running = registry.unreportedWrites[watch], let file = registry.fileOfWatch[watch] else {
        return []
      }
      if running > 1 {
        registry.unreportedWrites[watch] = running - 1
      } else {
        registry.unreportedWrites[watch] = nil
        // A pause of reading that silenced the watch meanwhile turns the reports on when it ends.
        if registry.reportsWrites(watch),
          let answered = POSIX.Inotify.setWatch(descriptor, file: file, reportingWrites: true),
          answered != watch
        {
          // The file was replaced during the commit: the old one's watch stays as it is, and so would an
          // unmuted watch; undo what reached the new file.
          undoSetWatch(answered, file: file, registry: registry)
        }
      }
      return registry.folders[watch]?.values.map(\.wake) ?? []
    }
    wakes.forEach { $0() }
  }

  /// Undoes a ``POSIX/Inotify/setWatch(_:file:reportingWrites:)`` that reached another file than the
  /// watched one (`file` was replaced): the watch it created is removed, or, if it is another store's,
  /// reports writes again unless that store's commit is running.
  private func undoSetWatch(_ answered: Int32, file: String, registry: Registry) {
    if registry.folders[answered] == nil {
      POSIX.Inotify.removeWatch(descriptor, answered)
    } else if registry.reportsWrites(answered) {
      _ = POSIX.Inotify.setWatch(descriptor, file: file, reportingWrites: true)
    }
  }
  #endif

  /// Ends the interest `token` stands for; the file's or folder's watch goes with its last watcher.
  /// Idempotent.
  ///
  /// ```swift
  /// monitor.stopWatching(token)
  /// ```
  func stopWatching(_ token: UInt64) {
    #if os(Linux)
    registry.withLock { registry in
      guard let watch = registry.watchOfToken.removeValue(forKey: token) else { return }
      registry.folders[watch]?[token] = nil
      if registry.folders[watch]?.isEmpty == true {
        _ = registry.remove(watch)
        POSIX.Inotify.removeWatch(descriptor, watch)
      }
    }
    #endif
  }

  #if os(Linux)
  /// Reads what is queued, wakes each interested watcher once, then pauses reading for ``readPause``.
  private func readAndDispatch() {
    let events = POSIX.Inotify.readEvents(descriptor)
    guard !events.isEmpty else { return }
    var wakes: [UInt64: @Sendable () -> Void] = [:]
    var losses: [@Sendable () -> Void] = []
    registry.withLock { registry in
      var written: Set<Int32> = []
      for event in events {
        if event.isOverflow {
          // Events were dropped: anyone may have missed a commit.
          for (token, watcher) in registry.folders.values.joined() { wakes[token] = watcher.wake }
        } else if event.isWatchRemoved {
          // Our own stopWatching removed the folder from the registry first; anything else lost it.
          guard let watchers = registry.remove(event.watch) else { continue }
          for (token, watcher) in watchers {
            registry.watchOfToken[token] = nil
            wakes[token] = nil
            losses.append(watcher.lost)
          }
        } else if let watchers = registry.folders[event.watch] {
          registry.reportedEvents[event.watch, default: 0] += 1
          written.insert(event.watch)
          for (token, watcher) in watchers where watcher.names?.contains(event.name) ?? true {
            wakes[token] = watcher.wake
          }
        }
      }
      let now = DispatchTime.now().uptimeNanoseconds
      for watch in written {
        // Only in a burst: a lone commit's wake-up would otherwise be followed by the pause's.
        var reads = 1
        if let last = registry.lastReported[watch], now &- last.time < Self.burstWindow {
          reads += last.reads
        }
        registry.lastReported[watch] = (now, reads)
        if reads >= Self.burstReads { pauseReports(watch, registry: &registry) }
      }
    }
    losses.forEach { $0() }
    wakes.values.forEach { $0() }
    // Each suspension has its own resumption. Events that arrive while suspended raise no new
    // edge for the source once it resumes (epoll is edge-triggered here): read them now.
    source.withLock { $0?.suspend() }
    queue.asyncAfter(deadline: .now() + Self.readPause) { [self] in
      resumeReports()
      source.withLock { $0?.resume() }
      readAndDispatch()
    }
  }

  /// Stops the kernel reporting the writes of the file watch `watch` until the pause of reading ends
  /// (``resumeReports()``); a folder's watch, or one a commit silenced already, stays as it is.
  private func pauseReports(_ watch: Int32, registry: inout Registry) {
    guard registry.reportsWrites(watch), let file = registry.fileOfWatch[watch],
      let answered = POSIX.Inotify.setWatch(descriptor, file: file, reportingWrites: false)
    else { return }
    guard answered == watch else {
      undoSetWatch(answered, file: file, registry: registry)
      return
    }
    registry.pausedWrites.insert(watch)
    registry.pauses[watch, default: 0] += 1
  }

  /// The end of a pause: the watches it silenced report writes again (unless a commit silences them
  /// now: its end does it), then every watcher of each is woken once — its check finds what was
  /// committed while the kernel did not report it.
  private func resumeReports() {
    let wakes = registry.withLock { registry -> [@Sendable () -> Void] in
      let paused = registry.pausedWrites
      registry.pausedWrites = []
      var wakes: [@Sendable () -> Void] = []
      for watch in paused {
        guard let file = registry.fileOfWatch[watch] else { continue }
        if registry.reportsWrites(watch),
          let answered = POSIX.Inotify.setWatch(descriptor, file: file, reportingWrites: true),
          answered != watch
        {
          undoSetWatch(answered, file: file, registry: registry)
        }
        wakes += registry.folders[watch]?.values.map(\.wakeAfterPause) ?? []
      }
      return wakes
    }
    wakes.forEach { $0() }
  }
  #endif
}
