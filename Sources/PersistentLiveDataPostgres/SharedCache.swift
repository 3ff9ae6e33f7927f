import Dispatch
import Foundation
import Logging

internal import class PersistentLiveData.MirrorFile

/// A replica's local copy of the latest version the server committed of every key it opened
/// (``PostgresStoreOptions/localCachePath``): an ordinary store file of this library, so `pld-tool keys`,
/// `get` and `history` read it. A key the server removed is removed from it as well.
///
/// Each version is kept under the number the server gave it, with its time, value schema version and
/// attribution (`MirrorFile`, the SQLite store's seam for copies of versions numbered elsewhere): the file's
/// version numbers are the server's, with gaps where this replica never saw a version. Only versions the
/// server committed reach it — after a commit, or after a read from the server — and only newer ones: it
/// never moves back.
///
/// Writes go through a serial queue of their own, 10 ms after the call that committed returned: a `set`
/// does not wait for the local disk, and pending writes of one key coalesce to the newest.
///
/// The file is opened on first use (so that an app that asked for ``PostgresStore/events()`` right after
/// creating the store hears of a file set aside). A file that cannot be used — damaged, foreign, of a
/// newer schema, not writable — is set aside: a warning is logged, a
/// `StoreEvent.localCacheSetAside(path:reason:)` sent, and the store goes on without a cache. The file
/// is never deleted nor changed then. A file locked by another connection (another process in a
/// transaction, another store of this process) is only skipped for a while: it is tried again after a
/// backoff (25 ms, doubling up to a second), and the rows recorded meanwhile are written once it is free.
///
/// ```swift
/// let cache = SharedCache(path: "/var/lib/app/flags.cache", logger: logger, events: events)
/// cache.record(row)
/// let cached = cache.latestRow(key: "feature-flags")
/// ```
final class SharedCache: Sendable {
  /// The application identifier of a cache file: a store file of an app is not taken for one.
  static let applicationIdentifier = "pld-postgres-cache"

  private enum Phase {
    case unopened
    case open(MirrorFile)
    case setAside
  }

  private struct State {
    var phase = Phase.unopened
    /// While the file is locked by another connection: no attempt to use it before this instant.
    var retryAt: ContinuousClock.Instant?
    /// The wait before the next attempt while it stays locked (nil: not locked).
    var lockedDelay: Duration?
  }

  let path: String
  private let state = Locked(State())
  private let logger: Logger?
  private let events: StoreEventHub
  private let queue = DispatchQueue(label: "pld.postgres.local-cache")
  /// What the queue is to write of a key: its newest row, or its removal.
  private enum Entry {
    case row(StoredRow)
    /// The key was removed on the server, the removal taking this version: the cache forgets the key.
    case removal(key: String, version: Int64)

    var key: String {
      switch self {
      case .row(let row): row.key
      case .removal(let key, _): key
      }
    }

    var version: Int64 {
      switch self {
      case .row(let row): row.version
      case .removal(_, let version): version
      }
    }
  }

  /// The newest row (or removal) of each key waiting for the queue.
  private let pending = Locked<[StoreKey: Entry]>([:])
  /// The newest version of each key known to be in the file: a row read again from the server (every
  /// `changes(since:)` reads the newest) is not written again.
  private let newestStored = Locked<[StoreKey: Int64]>([:])

  init(path: String, logger: Logger?, events: StoreEventHub) {
    self.path = path
    self.logger = logger
    self.events = events
  }

  /// How the cache is available now.
  private enum Availability {
    case usable(MirrorFile)
    /// Locked by another connection: try again at this instant.
    case locked(retryAt: ContinuousClock.Instant)
    case setAside
  }

  /// The open store, opening it on first use (or once a lock's backoff passed).
  private var availability: Availability {
    var failure: (any Error)?
    var lockedFirst = false
    let now = ContinuousClock.now
    let availability = state.withLock { state -> Availability in
      if case .setAside = state.phase { return .setAside }
      if let retryAt = state.retryAt, now < retryAt { return .locked(retryAt: retryAt) }
      if case .open(let store) = state.phase { return .usable(store) }
      do {
        let store = try MirrorFile(
          path: path, applicationIdentifier: Self.applicationIdentifier, logger: logger)
        state.phase = .open(store)
        return .usable(store)
      } catch let error where Self.isLock(error) {
        lockedFirst = state.lockedDelay == nil
        return .locked(retryAt: Self.noteLocked(in: &state, now: now))
      } catch {
        state.phase = .setAside
        failure = error
        return .setAside
      }
    }
    if let failure { reportSetAside(failure) }
    if lockedFirst { reportLocked() }
    return availability
  }

  /// The open store; nil while it is locked or once set aside.
  private var store: MirrorFile? {
    if case .usable(let store) = availability { return store }
    return nil
  }

  /// Whether `error` says the file is locked by another connection (of this process or another): a
  /// state that passes, so the file is tried again later rather than set aside.
  static func isLock(_ error: any Error) -> Bool {
    MirrorFile.isLock(error)
  }

  /// The first wait after the file was found locked, and the longest: it doubles in between.
  static let lockedBackoff = Duration.milliseconds(25)...Duration.seconds(1)

  /// Notes the file found locked; returns when to try again.
  private static func noteLocked(
    in state: inout State, now: ContinuousClock.Instant
  ) -> ContinuousClock.Instant {
    let delay = state.lockedDelay.map { min($0 * 2, lockedBackoff.upperBound) } ?? lockedBackoff.lowerBound
    state.lockedDelay = delay
    state.retryAt = now + delay
    return now + delay
  }

  /// The file answered: any lock's backoff is over.
  private func noteUsable() {
    let wasLocked = state.withLock { state -> Bool in
      defer {
        state.lockedDelay = nil
        state.retryAt = nil
      }
      return state.lockedDelay != nil
    }
    if wasLocked {
      logger?.info("The local cache file is no longer locked; using it again", metadata: ["path": "\(path)"])
    }
  }

  /// After an operation failed on a lock: try again after the backoff. Returns when.
  private func noteLocked() -> ContinuousClock.Instant {
    let (retryAt, first) = state.withLock { state in
      let first = state.lockedDelay == nil
      return (Self.noteLocked(in: &state, now: .now), first)
    }
    if first { reportLocked() }
    return retryAt
  }

  private func reportLocked() {
    logger?.info(
      "The local cache file is locked by another connection; trying again with a backoff",
      metadata: ["path": "\(path)"])
  }

  /// The newest cached row of `key`; nil when the cache does not hold it, is locked or set aside.
  func latestRow(key: String) -> StoredRow? {
    guard let store else { return nil }
    do {
      let row = try store.latestRow(key: key)
      noteUsable()
      if let row { noteStored(key: row.key, version: row.version) }
      return row
    } catch {
      failed(with: error)
      return nil
    }
  }

  /// The cached rows of `key`, newest first.
  func history(key: String) -> [StoredRow] {
    guard let store else { return [] }
    do {
      let rows = try store.rows(key: key)
      noteUsable()
      return rows
    } catch {
      failed(with: error)
      return []
    }
  }

  /// Keeps `row` — a version the server committed — unless the cache holds a newer one; written on the
  /// cache's queue.
  func record(_ row: StoredRow) {
    enqueue(.row(row))
  }

  /// Forgets `key`, which the server removed at `version`, unless the cache holds a newer version (a
  /// write after the removal): a removed member or key is not opened from the cache while the server is
  /// away. On the cache's queue, as rows are.
  func recordRemoval(key: String, version: Int64) {
    enqueue(.removal(key: key, version: version))
  }

  private func enqueue(_ entry: Entry) {
    if case .setAside = state.withLock({ $0.phase }) { return }
    let key = StoreKey(entry.key)
    if let stored = newestStored.withLock({ $0[key] }), stored >= entry.version { return }
    let isFirst = pending.withLock { pending -> Bool in
      let wasEmpty = pending.isEmpty
      if let waiting = pending[key], waiting.version >= entry.version { return false }
      pending[key] = entry
      return wasEmpty
    }
    // A little later than at once: the writes of a burst (a key set many times, many keys caught up)
    // coalesce into fewer commits of the cache, which then costs a `set` next to nothing.
    if isFirst { queue.asyncAfter(deadline: .now() + Self.writeDelay) { self.drain() } }
  }

  /// How long a recorded row may wait before the cache's queue writes it.
  static let writeDelay = DispatchTimeInterval.milliseconds(10)

  /// Writes every row recorded so far (dropped once the cache is set aside; kept for later while the
  /// file is locked).
  func flush() {
    queue.sync { drain() }
  }

  private func drain() {
    while true {
      let entries = pending.withLock { pending -> [Entry] in
        defer { pending = [:] }
        return Array(pending.values)
      }
      guard !entries.isEmpty else { return }
      let store: MirrorFile
      switch availability {
      case .setAside: continue
      case .locked(let retryAt):
        retry(entries, at: retryAt)
        return
      case .usable(let usable): store = usable
      }
      for (index, entry) in entries.enumerated() {
        do {
          switch entry {
          case .row(let row):
            // Not written when the file holds this version or a newer one already: newest as well.
            _ = try store.store(row)
            noteStored(key: row.key, version: row.version)
          case .removal(let key, let version):
            try store.forget(key: key)
            noteStored(key: key, version: version)
          }
          noteUsable()
        } catch let error where Self.isLock(error) {
          retry(Array(entries[index...]), at: noteLocked())
          return
        } catch {
          failed(with: error)
          break
        }
      }
    }
  }

  /// Puts `entries` back (unless newer ones of their keys came meanwhile) and writes them at `instant`.
  private func retry(_ entries: [Entry], at instant: ContinuousClock.Instant) {
    pending.withLock { pending in
      for entry in entries {
        let key = StoreKey(entry.key)
        if let waiting = pending[key], waiting.version >= entry.version { continue }
        pending[key] = entry
      }
    }
    let wait = max(instant - .now, .zero)
    let milliseconds = Int(
      wait.components.seconds * 1_000 + wait.components.attoseconds / 1_000_000_000_000_000)
    queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds + 1)) { self.drain() }
  }

  private func noteStored(key: String, version: Int64) {
    newestStored.withLock { newest in
      let key = StoreKey(key)
      newest[key] = max(newest[key] ?? 0, version)
    }
  }

  /// Writes what is pending, closes the file and stops using it (without an event: asked for).
  func close() {
    flush()
    let store = state.withLock { state -> MirrorFile? in
      defer { state.phase = .setAside }
      if case .open(let store) = state.phase { return store }
      return nil
    }
    try? store?.close()
  }

  /// After `error`: a lock is waited out (see ``isLock(_:)``); anything else sets the file aside (it
  /// is left as it is).
  private func failed(with error: any Error) {
    if Self.isLock(error) {
      _ = noteLocked()
      return
    }
    let store = state.withLock { state -> MirrorFile? in
      guard case .open(let store) = state.phase else { return nil }
      state.phase = .setAside
      return store
    }
    guard let store else { return }
    try? store.close()
    reportSetAside(error)
  }

  private func reportSetAside(_ error: any Error) {
    let reason = "\(error)"
    logger?.warning(
      "The local cache file cannot be used; working without a cache",
      metadata: ["path": "\(path)", "reason": "\(reason)"])
    events.emit(.localCacheSetAside(path: path, reason: reason))
  }
}
