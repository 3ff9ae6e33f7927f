import Logging
import PersistentLiveData
import PostgresNIO

/// Sends the notifications of committed writes, after their commit, in statements of their own.
///
/// A transaction with a pending notification takes an instance-wide lock at commit (PostgreSQL queues
/// notifications in commit order) and flushes its WAL under it, so writers that notify inside their
/// transaction stop sharing WAL flushes: with pgbench and fsync on, 16–64 clients ran at a quarter of the
/// throughput of the same rows without the notification. A `SELECT pg_notify(…)` of its own writes no WAL
/// and holds that lock only for a moment.
///
/// The caller's write does not wait for its notification: its data is durable and memory moved when the
/// commit returns, the notification only tells other replicas sooner. Waiting would add a round trip to
/// every write, and a notification that fails must not turn an acknowledged commit into an error anyway.
/// So ``send(_:)`` queues and returns; one task at a time sends what is queued, all of it in one statement
/// (a burst becomes a few statements, only the newest version of each key), logs a failure and goes on.
///
/// A notification can therefore be lost — the process dies after the commit, or the statement fails. The
/// periodic catch-up (``PostgresStoreOptions/catchUpInterval``, in ``SharedListener``) delivers that
/// version anyway: it asks the server which keys changed since its last look (``SharedChangeFeed``).
///
/// ```swift
/// notifier.send([SharedNotification(keyHash: write.keyHash, version: 7, payload: "7 5f3a k flags")])
/// ```
final class SharedNotifier: Sendable {
  private struct State {
    var pending: [SharedNotification] = []
    var isSending = false
  }

  private let state = Locked(State())
  private let idle = ChangeSignal()
  private let client: PostgresClient
  private let timeout: Duration
  private let logger: Logger

  /// The most notifications one statement sends.
  static let batchLimit = 500

  init(client: PostgresClient, timeout: Duration, logger: Logger) {
    self.client = client
    self.timeout = timeout
    self.logger = logger
  }

  /// Queues the notifications of a commit; they are sent at once if nothing is being sent, else right
  /// after what is.
  func send(_ notifications: [SharedNotification]) {
    guard !notifications.isEmpty else { return }
    let start = state.withLock { state -> Bool in
      state.pending.append(contentsOf: notifications)
      if state.isSending { return false }
      state.isSending = true
      return true
    }
    guard start else { return }
    Task { await drain() }
  }

  /// Waits until every queued notification was sent (or failed), at most `limit`.
  func flush(within limit: Duration) async {
    _ = try? await withDeadline(limit, operation: "notify") { [self] in
      await idle.wait(until: { state.withLock { $0.pending.isEmpty && !$0.isSending } })
    }
  }

  private func drain() async {
    while true {
      let batch = state.withLock { state -> [SharedNotification] in
        let batch = Self.newestPerKey(state.pending.prefix(Self.batchLimit))
        state.pending.removeFirst(min(Self.batchLimit, state.pending.count))
        if batch.isEmpty { state.isSending = false }
        return batch
      }
      if batch.isEmpty {
        idle.signal()
        return
      }
      do {
        try await withDeadline(timeout, operation: "notify") { [client] in
          let rows = try await client.query(
            """
            SELECT pg_notify(\(SharedDatabase.channel), payload)
            FROM unnest(\(batch.map(\.payload))::text[]) AS payload
            """, logger: SharedSchema.quiet)
          for try await _ in rows {}
        }
      } catch {
        // The data committed: the other replicas' periodic catch-up brings these versions.
        logger.warning(
          "Could not notify other replicas of committed writes; they catch up by version",
          metadata: ["writes": "\(batch.count)", "error": "\(SharedDatabase.describe(error))"])
      }
    }
  }

  /// The newest version of each key among `notifications`, in the order keys first appear: an older one
  /// tells another replica nothing the newer does not.
  static func newestPerKey(_ notifications: ArraySlice<SharedNotification>) -> [SharedNotification] {
    var index: [String: Int] = [:]
    var newest: [SharedNotification] = []
    for notification in notifications {
      if let at = index[notification.keyHash] {
        if notification.version > newest[at].version { newest[at] = notification }
      } else {
        index[notification.keyHash] = newest.count
        newest.append(notification)
      }
    }
    return newest
  }
}

/// One committed write's notification: `VERSION ORIGIN k KEY` or `VERSION ORIGIN h HASH`.
struct SharedNotification: Sendable {
  let keyHash: String
  let version: Int64
  let payload: String

  init(write: SharedWrite, version: Int64, origin: String) {
    keyHash = write.keyHash
    self.version = version
    payload =
      write.key.utf8.count <= SharedDatabase.longestNotifiedKey
      ? "\(version) \(origin) k \(write.key)" : "\(version) \(origin) h \(write.keyHash)"
  }
}

/// What tests set to stop a writer at a chosen point. Never set by the library.
package enum SharedStoreTestHooks {
  /// Called with the versions a commit wrote, after the commit returned and before its notifications
  /// are queued: a test child `_exit`s in it to lose a notification the way a crash does.
  package static let afterCommitBeforeNotify = Locked<(@Sendable ([Int64]) -> Void)?>(nil)
}
