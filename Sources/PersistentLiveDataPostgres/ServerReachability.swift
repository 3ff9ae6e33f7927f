import CoreMetrics
import PersistentLiveData

/// Whether the store's last attempt to reach its server — a call, the listener, a catch-up — succeeded:
/// the one place that knows it, reported as the gauge `pld.postgres.reachable` (1 or 0).
///
/// A call that the server answered with an error (a constraint, a schema it refuses) reached it; one
/// that found no connection, lost it, or ran out of time did not. Before the first attempt the store
/// counts as unreachable and the gauge has no value yet.
///
/// ```swift
/// database.reachability.record(reached: true)
/// database.reachability.isReachable   // true
/// ```
final class ServerReachability: Sendable {
  private let state = Locked<Bool?>(nil)
  private let gauge: Gauge?

  init(gauge: Gauge?) {
    self.gauge = gauge
  }

  /// The outcome of the last attempt; false before the first one.
  var isReachable: Bool { state.withLock { $0 } ?? false }

  /// Records an attempt's outcome; the gauge moves only when it changes. The gauge is written under the
  /// lock: two outcomes recorded at once (the listener reconnecting while a call fails) reach it in the
  /// order they reached the state, so its last value is always the state's.
  func record(reached: Bool) {
    state.withLock { state in
      guard state != reached else { return }
      state = reached
      gauge?.record(reached ? 1 : 0)
    }
  }

  /// Records the outcome of a call that threw `error`: only an unavailable server or a call that ran
  /// out of time count as not reached (a cancelled call says nothing).
  func record(failure error: any Error) {
    switch error {
    case SharedStoreError.serverUnavailable, SharedStoreError.timedOut: record(reached: false)
    case is CancellationError: break
    default: record(reached: true)
    }
  }
}
