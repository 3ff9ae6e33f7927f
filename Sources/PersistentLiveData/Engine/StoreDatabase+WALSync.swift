internal import Dispatch
internal import Logging

/// The bounded loss window of ``Durability/normal``: a commit arms a sync of the write-ahead log
/// ``StoreOptions/walSyncInterval`` later (unless one is armed already), so that a power loss loses at most
/// the commits of the last interval — instead of every commit since the last checkpoint, SQLite's own
/// `synchronous=NORMAL`. The sync goes through the connection's VFS
/// (``SQLiteConnection/syncWriteAheadLog()``) under the store's lock, like a checkpoint; an idle store arms
/// nothing.
///
/// ```swift
/// var options = StoreOptions(durability: .normal)
/// options.walSyncInterval = .milliseconds(100)   // the default
/// ```
extension StoreDatabase {
  /// One queue for the timers of every store: a sync is short, and the timers only wait.
  static let walSyncQueue = DispatchQueue(label: "PersistentLiveData.wal-sync", qos: .utility)

  /// Syncs the WAL (on the timer armed by a commit); commits from now on arm the next one.
  func syncWriteAheadLog() {
    let failure =
      writer.syncIfOpen { connection, state -> (any Error)? in
        state.isWALSyncScheduled = false
        do {
          try connection.syncWriteAheadLog()
          return nil
        } catch {
          return error
        }
      } ?? nil
    // Logging is a handler's code: after the lock is released. The next commit arms another sync.
    if let failure {
      options.logger?.error(
        "Background sync of the write-ahead log failed; the commits since the last sync are not yet durable",
        metadata: ["path": "\(displayPath)", "error": "\(StoreErrors.map(failure, path: displayPath))"])
    }
  }
}
