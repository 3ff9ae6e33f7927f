import Dispatch
import Foundation

/// A serial executor that times every job it runs. For an actor on this executor, a job runs from one
/// resumption to the next suspension: its duration is the time the actor is busy — for a `write(_:)`
/// call, the time the caller is blocked before it suspends.
final class TimingExecutor: SerialExecutor, @unchecked Sendable {
  private let queue = DispatchQueue(label: "pld-bench.timed-caller")
  /// Guards `durations`.
  private let lock = NSLock()
  private var durations: [Double] = []

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { [self] in
      let start = MonotonicClock.now()
      job.runSynchronously(on: asUnownedSerialExecutor())
      let elapsed = MonotonicClock.nanoseconds(since: start)
      lock.withLock { durations.append(elapsed) }
    }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }

  /// The durations recorded so far, in nanoseconds, and forgets them.
  func takeDurations() -> [Double] {
    lock.withLock {
      defer { durations.removeAll() }
      return durations
    }
  }
}

/// An actor whose jobs a ``TimingExecutor`` times.
actor TimedCaller {
  let executor = TimingExecutor()

  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  /// Runs `body` on this actor.
  func run<T: Sendable>(_ body: @Sendable (isolated TimedCaller) async throws -> T) async rethrows -> T {
    try await body(self)
  }
}
