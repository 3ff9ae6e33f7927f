import Dispatch
public import Testing

/// Runs each test of a suite (or one test) on a thread of its own instead of Swift's cooperative pool.
///
/// The pool has one thread per core: two on the CI machines. A test that waits for a child process, a
/// `pld-tool` run or a long synchronous loop holds one of them for as long as it runs, and two such tests
/// at once stopped every other suite for 30 s and more (a shared-store replica could not even start
/// listening, and failed its test). A test with this trait holds a thread of its own, and the pool stays
/// free for the tests that need it.
///
/// The test's tasks run one job at a time on that thread, child tasks included: a test that blocks while
/// waiting for one of its own child tasks must not use it.
///
/// ```swift
/// @Suite(.ownThread) struct ProcessKillTests { … }
/// ```
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
  /// True: on a suite, the trait reaches every test in it and in its nested suites.
  public var isRecursive: Bool { true }

  /// Runs `function` (one test, or one case of a parameterized test) with a new serial executor as its
  /// task's preferred executor.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withTaskExecutorPreference(SerialQueueExecutor(label: "pld-test \(test.name)")) {
      try await function()
    }
  }
}

extension Trait where Self == OwnThreadTrait {
  /// Runs each test on a thread of its own, not on the cooperative pool: ``OwnThreadTrait``.
  public static var ownThread: Self { OwnThreadTrait() }
}

/// Runs jobs on a serial dispatch queue of its own: such a queue is served by a thread outside the
/// cooperative pool whenever it has work.
public final class SerialQueueExecutor: TaskExecutor {
  private let queue: DispatchQueue

  /// An executor on a new serial queue named `label`.
  public init(label: String) {
    queue = DispatchQueue(label: label)
  }

  /// Runs `job` on the queue, after the jobs enqueued before it.
  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
