import Dispatch
import Foundation

/// A serial executor that times every job it runs. For an actor on this executor, a job runs from one
/// resumption to the next suspension: its duration is the time the actor is busy — for a `write(_:)`
/// call, the time the caller is blocked before it suspends. Each job's CPU time on its thread is kept
/// too: the difference is time the thread was runnable but not running (preempted by another thread).
final class TimingExecutor: SerialExecutor, @unchecked Sendable {
  private let queue = DispatchQueue(label: "pld-bench.timed-caller")
  /// Guards `durations`.
  private let lock = NSLock()
  private var durations: [Double] = []
  private var cpuDurations: [Double] = []

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { [self] in
      let cpuStart = Self.threadCPUNanoseconds()
      let start = MonotonicClock.now()
      job.runSynchronously(on: asUnownedSerialExecutor())
      let elapsed = MonotonicClock.nanoseconds(since: start)
      let cpu = Self.threadCPUNanoseconds() - cpuStart
      lock.withLock {
        durations.append(elapsed)
        cpuDurations.append(cpu)
      }
    }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }

  /// The durations recorded so far, in nanoseconds, and forgets them.
  func takeDurations() -> [Double] {
    takeDurationsWithCPU().wall
  }

  /// The wall-clock durations and the thread CPU times recorded so far, in nanoseconds, and forgets
  /// them.
  func takeDurationsWithCPU() -> (wall: [Double], cpu: [Double]) {
    lock.withLock {
      defer {
        durations.removeAll()
        cpuDurations.removeAll()
      }
      return (durations, cpuDurations)
    }
  }

  /// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
  private static func threadCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
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
