import Dispatch
import Foundation
import Logging
import PersistentLiveData

/// A replica's local copy of the latest version the server committed of every key it opened
/// (``PostgresStoreOptions/localCachePath``): an ordinary store file of this library, so `pld-tool keys`,
/// `get` and `history` read it.
///
/// Each version is kept under the number the server gave it, with its time, value schema version and
/// attribution (``PersistentStore/storeVerbatim(_:)``, the faithful-restore path of the store's one
/// insert): the file's version numbers are the server's, with gaps where this replica never saw a
/// version. Only versions the server committed reach it — after a commit, or after a read from the
/// server — and only newer ones: it never moves back.
///
/// Writes go through a serial queue of their own, 10 ms after the call that committed returned: a `set`
/// does not wait for the local disk, and pending writes of one key coalesce to the newest.
///
/// The file is opened on first use (so that an app that asked for ``PostgresStore/events()`` right after
/// creating the store hears of a file set aside). A file that cannot be used — damaged, foreign, of a
/// newer schema, locked, not writable — is set aside: a warning is logged, a
/// `StoreEvent.localCacheSetAside(path:reason:)` sent, and the store goes on without a cache. The file
/// is never deleted nor changed then.
///
/// ```swift
/// let cache = SharedCache(path: "/var/lib/app/flags.cache", logger: logger, events: events)
/// cache.record(row)
/// let cached = cache.latestRow(key: "feature-flags")
/// ```
final class SharedCache: Sendable {
  /// The application identifier of a cache file: a store file of an app is not taken for one.
  static let applicationIdentifier = "pld-postgres-cache"

  private enum State {
    case unopened
    case open(PersistentStore)
    case setAside
  }

  let path: String
  private let state = Locked(State.unopened)
  private let logger: Logger?
  private let events: StoreEventHub
  private let queue = DispatchQueue(label: "pld.postgres.local-cache")
  /// The newest row of each key waiting for the queue.
  private let pending = Locked<[StoreKey: StoredRow]>([:])
  /// The newest version of each key known to be in the file: a row read again from the server (every
  /// `changes(since:)` reads the newest) is not written again.
  private let newestStored = Locked<[StoreKey: Int64]>([:])

  init(path: String, logger: Logger?, events: StoreEventHub) {
    self.path = path
    self.logger = logger
    self.events = events
  }

  /// The open store, opening it on first use; nil once set aside.
  private var store: PersistentStore? {
    var failure: (any Error)?
    let store = state.withLock { state -> PersistentStore? in
      switch state {
      case .open(let store): return store
      case .setAside: return nil
      case .unopened:
        do {
          let store = try PersistentStore(path: path, options: Self.storeOptions(logger: logger))
          state = .open(store)
          return store
        } catch {
          state = .setAside
          failure = error
          return nil
        }
      }
    }
    if let failure { reportSetAside(failure) }
    return store
  }

  static func storeOptions(logger: Logger?) -> StoreOptions {
    // A cache that loses its last versions to a power cut only starts a little staler: no wait for the
    // disk at each commit. Nobody else writes it: no watching for other processes.
    var options = StoreOptions(durability: .normal, retention: .last(8))
    options.applicationIdentifier = applicationIdentifier
    options.watchesStoreFiles = false
    options.externalChangePollInterval = nil
    // A file locked by another process is given up at once rather than waited for.
    options.busyTimeoutMilliseconds = 20
    options.logger = logger
    return options
  }

  /// Whether the cache is in use (not set aside), opening it if it was not yet.
  var isUsable: Bool { store != nil }

  /// The newest cached row of `key`; nil when the cache does not hold it or is set aside.
  func latestRow(key: String) -> StoredRow? {
    guard let store else { return nil }
    do {
      let row = try store.rows(key: key, limit: 1).first
      if let row { noteStored(row) }
      return row
    } catch {
      setAside(after: error)
      return nil
    }
  }

  /// The cached rows of `key`, newest first.
  func history(key: String) -> [StoredRow] {
    guard let store else { return [] }
    do {
      return try store.rows(key: key)
    } catch {
      setAside(after: error)
      return []
    }
  }

  /// Keeps `row` — a version the server committed — unless the cache holds a newer one; written on the
  /// cache's queue.
  func record(_ row: StoredRow) {
    if case .setAside = state.withLock({ $0 }) { return }
    let key = StoreKey(row.key)
    if let stored = newestStored.withLock({ $0[key] }), stored >= row.version { return }
    let isFirst = pending.withLock { pending -> Bool in
      let wasEmpty = pending.isEmpty
      if let waiting = pending[key], waiting.version >= row.version { return false }
      pending[key] = row
      return wasEmpty
    }
    // A little later than at once: the writes of a burst (a key set many times, many keys caught up)
    // coalesce into fewer commits of the cache, which then costs a `set` next to nothing.
    if isFirst { queue.asyncAfter(deadline: .now() + Self.writeDelay) { self.drain() } }
  }

  /// How long a recorded row may wait before the cache's queue writes it.
  static let writeDelay = DispatchTimeInterval.milliseconds(10)

  /// Waits until every row recorded so far is written (or the cache set aside).
  func flush() {
    queue.sync { drain() }
  }

  private func drain() {
    while true {
      let rows = pending.withLock { pending -> [StoredRow] in
        defer { pending = [:] }
        return Array(pending.values)
      }
      guard !rows.isEmpty else { return }
      guard let store else { continue }
      for row in rows {
        do {
          // Not written when the file holds this version or a newer one already: newest as well.
          _ = try store.storeVerbatim(row)
          noteStored(row)
        } catch {
          setAside(after: error)
          break
        }
      }
    }
  }

  private func noteStored(_ row: StoredRow) {
    newestStored.withLock { newest in
      let key = StoreKey(row.key)
      newest[key] = max(newest[key] ?? 0, row.version)
    }
  }

  /// Writes what is pending, closes the file and stops using it (without an event: asked for).
  func close() {
    flush()
    let store = state.withLock { state -> PersistentStore? in
      defer { state = .setAside }
      if case .open(let store) = state { return store }
      return nil
    }
    try? store?.close()
  }

  /// Stops using the file after `error` (it is left as it is).
  private func setAside(after error: any Error) {
    let store = state.withLock { state -> PersistentStore? in
      guard case .open(let store) = state else { return nil }
      state = .setAside
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
