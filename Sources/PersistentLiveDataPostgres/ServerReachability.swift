import CoreMetrics
import Logging
import PersistentLiveDataBackend

/// Whether the store's last attempt to reach its server — a call, the listener, a catch-up — succeeded:
/// the one place that knows it, reported as the gauge `pld.postgres.reachable` (1 or 0), as
/// ``PostgresStore/isServerReachable`` and as the events `StoreEvent.serverUnreachable(reason:)` and
/// `StoreEvent.serverReachable`.
///
/// A call that the server answered with an error (a constraint, a schema it refuses) reached it; one
/// that found no connection, lost it, or ran out of time did not. Before the first attempt the store
/// counts as unreachable and the gauge has no value yet.
///
/// A store with a local cache also notes when the server did not answer a read within the short grace
/// it gives it before opening a key from the cache (``noteUnanswered()``): until the server answers
/// again, later keys open from the cache at once instead of each waiting for that grace.
///
/// ```swift
/// database.reachability.record(reached: true)
/// database.reachability.isReachable   // true
/// ```
final class ServerReachability: Sendable {
  private struct State {
    var reached: Bool?
    var unanswered = false
  }

  private let state = Locked(State())
  private let gauge: Gauge?
  private let events: StoreEventHub?
  private let logger: Logger?

  init(gauge: Gauge?, events: StoreEventHub? = nil, logger: Logger? = nil) {
    self.gauge = gauge
    self.events = events
    self.logger = logger
  }

  /// The outcome of the last attempt; false before the first one.
  var isReachable: Bool { state.withLock { $0.reached } ?? false }

  /// Whether the server is known not to answer now: the last attempt failed, or a read went unanswered
  /// within its grace since the last success.
  var isDoubtful: Bool { state.withLock { $0.reached == false || $0.unanswered } }

  /// A read was not answered within the grace before opening from the cache (see the type's summary).
  func noteUnanswered() {
    state.withLock { $0.unanswered = true }
  }

  /// Records an attempt's outcome; the gauge moves, and an event is sent, only when it changes. Both
  /// happen under the lock: two outcomes recorded at once (the listener reconnecting while a call fails)
  /// reach them in the order they reached the state, so the gauge's last value is always the state's and
  /// the events alternate.
  ///
  /// `refused` says that the server answered and refused the connection (a role, database or password
  /// it does not accept): the warning then says so, rather than that the server is unreachable.
  func record(reached: Bool, reason: @autoclosure () -> String = "", refused: Bool = false) {
    state.withLock { state in
      let previous = state.reached
      if reached { state.unanswered = false }
      guard previous != reached else { return }
      state.reached = reached
      gauge?.record(reached ? 1 : 0)
      if reached {
        // The first contact is no news; coming back after an outage is.
        guard previous == false else { return }
        logger?.info("The PostgreSQL server is reachable again")
        events?.emit(.serverReachable)
      } else {
        let reason = reason()
        logger?.warning(
          refused
            ? "The PostgreSQL server refused the connection: \(reason)"
            : "The PostgreSQL server is unreachable: \(reason)",
          metadata: ["reason": "\(reason)"])
        events?.emit(.serverUnreachable(reason: reason))
      }
    }
  }

  /// Records the outcome of a call that threw `error`: only an unavailable server or a call that ran
  /// out of time count as not reached (a cancelled call says nothing).
  func record(failure error: any Error) {
    switch error {
    case SharedStoreError.serverUnavailable, SharedStoreError.timedOut:
      record(reached: false, reason: "\(error)")
    case is CancellationError: break
    default: record(reached: true)
    }
  }
}
