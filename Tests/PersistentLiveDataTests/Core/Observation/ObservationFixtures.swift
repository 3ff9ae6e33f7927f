import Dispatch
import Foundation
import Synchronization
import Testing

@testable import PersistentLiveData

/// A lifecycle owner for observation tests: its observers receive values only while `scopeLifecycle` is
/// active; releasing it deinitializes the scope.
@MainActor final class ScopedOwner: LifecycleOwner {
  let scopeLifecycle = ScopeLifecycle()
  /// Filled by the owner-passing `observe(owner:) { owner, value in … }` form.
  var received: [Int] = []
}

/// Any object that is not a lifecycle owner: it counts as active while alive.
final class PlainOwner {
  var received: [Int] = []
}

/// A LiveData that counts its `onActive`/`onInactive` calls and can run code inside them.
final class CountingLiveData: MutableLiveData<Int>, @unchecked Sendable {
  @MainActor var activeCalls = 0
  @MainActor var inactiveCalls = 0
  @MainActor var whenActive: (@MainActor () -> Void)?
  @MainActor var whenInactive: (@MainActor () -> Void)?

  @MainActor override func onActive() {
    activeCalls += 1
    whenActive?()
  }

  @MainActor override func onInactive() {
    inactiveCalls += 1
    whenInactive?()
  }
}

/// A main-actor log shared by several observers, to check the order in which they are called.
@MainActor final class CallLog<Entry: Equatable> {
  private(set) var entries: [Entry] = []
  func append(_ entry: Entry) { entries.append(entry) }
}

/// Runs `body(index)` on `count` real threads that start together, and blocks the caller until all have
/// finished (at most `timeout`). Returns false on timeout.
///
/// Called from a `@MainActor` test it also blocks the main actor for the whole run, which is how tests prove
/// that nothing is delivered synchronously on the writer's thread and that deliveries are coalesced.
/// (`DispatchQueue.concurrentPerform` often runs serially on 2 cores; real `Thread`s contend.)
@discardableResult
func runOnThreadsBlocking(
  _ count: Int, timeout: DispatchTimeInterval = .seconds(30), _ body: @escaping @Sendable (Int) -> Void
) -> Bool {
  let group = DispatchGroup()
  startThreads(count) { index in
    body(index)
    group.leave()
  } willStart: {
    group.enter()
  }
  return group.wait(timeout: .now() + timeout) == .success
}

/// Runs `body(index)` on `count` real threads that start together, and waits without blocking the caller's
/// actor (so main-actor deliveries keep running) until all have finished. Returns false on timeout.
func runOnThreads(
  _ count: Int, timeout: Duration = .seconds(30), _ body: @escaping @Sendable (Int) -> Void
) async -> Bool {
  let finished = Locked(0)
  startThreads(count) { index in
    body(index)
    finished.withLock { $0 += 1 }
  } willStart: {
  }
  return await eventually(timeout: timeout) { finished.value == count }
}

private func startThreads(
  _ count: Int, _ body: @escaping @Sendable (Int) -> Void, willStart: () -> Void
) {
  let gate = StartGate(expected: count)
  for index in 0..<count {
    willStart()
    let thread = Thread {
      gate.arriveAndWait()
      body(index)
    }
    thread.start()
  }
}

/// Makes threads start their work at the same moment so that they really contend.
private final class StartGate: Sendable {
  private let expected: Int
  private let arrived = Atomic<Int>(0)

  init(expected: Int) { self.expected = expected }

  func arriveAndWait() {
    arrived.add(1, ordering: .sequentiallyConsistent)
    while arrived.load(ordering: .sequentiallyConsistent) < expected {
      sched_yield()
    }
  }
}

/// Values written by several threads: `count` is the number of updates applied, so right after the n-th
/// update (version n for a LiveData created at version 0) it is n. Readers check `value` against `version`.
struct Counted: Sendable, Equatable {
  var count: Int64 = 0
}
