#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The benchmark's only clock: `CLOCK_MONOTONIC`, in nanoseconds.
///
/// ```swift
/// let start = MonotonicClock.now()
/// work()
/// let elapsed = MonotonicClock.nanoseconds(since: start)
/// ```
enum MonotonicClock {
  /// Nanoseconds since an arbitrary fixed point; never goes backwards.
  static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// Nanoseconds elapsed since `start`, a value of ``now()``.
  static func nanoseconds(since start: UInt64) -> Double {
    Double(now() &- start)
  }

  /// Runs `body` once and returns how long it took, in nanoseconds.
  static func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return nanoseconds(since: start)
  }
}
