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

  /// A store's interest in one file, or in some files of one folder.
  private struct Watcher {
    /// The names of the folder's files whose writes wake; nil for a file's own watch (every event).
    let names: Set<String>?
    let wake: @Sendable () -> Void
    let lost: @Sendable () -> Void
  }

  /// Watches and who asked for them; guarded by `registry`'s lock, which never runs a store's code.
  private struct Registry {
    /// By inotify watch: the watchers of that file or folder, by token.
    var folders: [Int32: [UInt64: Watcher]] = [:]
    /// The watch of each token.
    var watchOfToken: [UInt64: Int32] = [:]
    var nextToken: UInt64 = 1
  }

  #if os(Linux)
  private let descriptor: Int32
  private let queue = DispatchQueue(label: "PersistentLiveData.file-changes")
  private let source: Locked<(any DispatchSourceRead)?>
  private let registry = Locked(Registry())

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
    register(Watcher(names: names, wake: wake, lost: lost)) {
      POSIX.Inotify.addWatch(descriptor, folder: folder)
    }
    #else
    .failure(POSIX.Failure(operation: "inotify", code: 0))
    #endif
  }

  /// Calls `wake` (on the monitor's queue; it must return quickly) whenever `file` is written, by this
  /// process or another, and `lost` once if the watch ends without ``stopWatching(_:)`` (the file
  /// deleted, its file system unmounted).
  ///
  /// ```swift
  /// let token = try monitor.watch(file: "/var/app/state.db-wal", wake: wake, lost: lost).get()
  /// ```
  /// - Returns: A token for ``stopWatching(_:)``, or why the file cannot be watched (`ENOENT`: it does
  ///   not exist; `ENOSPC`: the user's `fs.inotify.max_user_watches` is reached).
  func watch(
    file: String, wake: @escaping @Sendable () -> Void, lost: @escaping @Sendable () -> Void
  ) -> Result<UInt64, POSIX.Failure> {
    #if os(Linux)
    register(Watcher(names: nil, wake: wake, lost: lost)) { POSIX.Inotify.addWatch(descriptor, file: file) }
    #else
    .failure(POSIX.Failure(operation: "inotify", code: 0))
    #endif
  }

  #if os(Linux)
  /// Adds the watch `add` makes (under the registry's lock, so that a watch removed by stopWatching
  /// cannot be re-added halfway) and records `watcher` for it.
  private func register(
    _ watcher: Watcher, _ add: () -> Result<Int32, POSIX.Failure>
  ) -> Result<UInt64, POSIX.Failure> {
    registry.withLock { registry in
      add().map { watch in
        let token = registry.nextToken
        registry.nextToken += 1
        registry.folders[watch, default: [:]][token] = watcher
        registry.watchOfToken[token] = watch
        return token
      }
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
        registry.folders[watch] = nil
        POSIX.Inotify.removeWatch(descriptor, watch)
      }
    }
    #endif
  }

  /// The files and folders watched now, and the watchers they serve (for tests and diagnostics).
  ///
  /// ```swift
  /// let (folders, watchers) = monitor.counts
  /// ```
  var counts: (folders: Int, watchers: Int) {
    #if os(Linux)
    registry.withLock { ($0.folders.count, $0.watchOfToken.count) }
    #else
    (0, 0)
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
      for event in events {
        if event.isOverflow {
          // Events were dropped: anyone may have missed a commit.
          for (token, watcher) in registry.folders.values.joined() { wakes[token] = watcher.wake }
        } else if event.isWatchRemoved {
          // Our own stopWatching removed the folder from the registry first; anything else lost it.
          guard let watchers = registry.folders.removeValue(forKey: event.watch) else { continue }
          for (token, watcher) in watchers {
            registry.watchOfToken[token] = nil
            wakes[token] = nil
            losses.append(watcher.lost)
          }
        } else if let watchers = registry.folders[event.watch] {
          for (token, watcher) in watchers where watcher.names?.contains(event.name) ?? true {
            wakes[token] = watcher.wake
          }
        }
      }
    }
    losses.forEach { $0() }
    wakes.values.forEach { $0() }
    // Each suspension has its own resumption. Events that arrive while suspended raise no new
    // edge for the source once it resumes (epoll is edge-triggered here): read them now.
    source.withLock { $0?.suspend() }
    queue.asyncAfter(deadline: .now() + Self.readPause) { [self] in
      source.withLock { $0?.resume() }
      readAndDispatch()
    }
  }
  #endif
}
