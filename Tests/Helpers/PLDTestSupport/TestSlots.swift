public import Testing

/// Runs at most ``limit`` of the tests that carry it at once, however many the test runner starts: the
/// shared-store suites each start replicas with connection pools on one test server, and every one of
/// them started at once (`swift test` starts every test of a two-core machine's run together) left each
/// replica's first steps waiting on the machine for longer than its `operationTimeout`, and the pools of
/// the tests that failed then filled the server's `max_connections`. `--experimental-maximum-parallelization-width 8`
/// (as CI runs) bounds every test; this bounds these in a plain `swift test` too.
///
/// A test that already holds a slot (a trait on its suite and on itself) takes no second one.
///
/// ```swift
/// @Suite(.sharedStoreSlot, .enabled(if: postgresAvailable)) struct SharedStoreTests { … }
/// ```
public struct TestSlotTrait: TestTrait, SuiteTrait, TestScoping {
  /// How many tests carrying the trait run at once.
  public static let limit = 6

  /// True: on a suite, the trait reaches every test in it and in its nested suites.
  public var isRecursive: Bool { true }

  @TaskLocal private static var holdsSlot = false
  private static let slots = TestSlots(limit)

  /// Runs `function` — one test case — once a slot is free; a suite's scope passes through.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    guard testCase != nil, !test.isSuite, !Self.holdsSlot else {
      try await function()
      return
    }
    await Self.slots.acquire()
    do {
      try await Self.$holdsSlot.withValue(true) { try await function() }
    } catch {
      await Self.slots.release()
      throw error
    }
    await Self.slots.release()
  }
}

extension Trait where Self == TestSlotTrait {
  /// At most ``TestSlotTrait/limit`` shared-store tests at once: ``TestSlotTrait``.
  public static var sharedStoreSlot: Self { TestSlotTrait() }
}

/// A counting semaphore for tasks: ``acquire()`` waits (suspending, never blocking a thread) until one of
/// its slots is free.
///
/// ```swift
/// let slots = TestSlots(2)
/// await slots.acquire(); defer { Task { await slots.release() } }
/// ```
public actor TestSlots {
  private var free: Int
  private var waiting: [CheckedContinuation<Void, Never>] = []

  /// A semaphore of `count` slots.
  public init(_ count: Int) { free = count }

  /// Takes a slot, waiting for one to be released if none is free.
  public func acquire() async {
    if free > 0 {
      free -= 1
      return
    }
    await withCheckedContinuation { waiting.append($0) }
  }

  /// Gives a slot back, to the longest waiter if there is one.
  public func release() {
    if waiting.isEmpty {
      free += 1
    } else {
      waiting.removeFirst().resume()
    }
  }
}
