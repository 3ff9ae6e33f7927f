import Dispatch
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// `values`: a nonisolated async sequence of the current value and then the latest of each change.
@Suite struct LiveDataValuesTests {
  @Test func yieldsTheCurrentValueFirst() async {
    let live = MutableLiveData(5)
    var iterator = live.values.makeAsyncIterator()
    #expect(await iterator.next() == 5)
  }

  @Test func yieldsEachChangeAfterTheCurrentValue() async {
    let live = MutableLiveData(0)
    var iterator = live.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    live.set(1)
    #expect(await iterator.next() == 1)
    live.update { $0 += 1 }
    #expect(await iterator.next() == 2)
  }

  @Test func uninitializedLiveDataYieldsNothingBeforeTheFirstSet() async {
    let live = MutableLiveData<Int?>()
    var iterator = live.values.makeAsyncIterator()
    live.set(3)
    let first = await iterator.next()
    #expect(first == .some(3), "no placeholder nil before the first set")
  }

  @Test func fastChangesAreCoalescedButEndOnTheLatest() async {
    let live = MutableLiveData(0)
    let stream = live.values
    for value in 1...100 { live.set(value) }
    var seen: [Int] = []
    for await value in stream {
      seen.append(value)
      if value == 100 { break }
    }
    #expect(seen.last == 100)
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "\(seen)")
  }

  @Test func endsWhenTheConsumingTaskIsCancelled() async {
    let live = MutableLiveData(0)
    let received = Locked<[Int]>([])
    let ended = Locked(false)
    let consumer = Task.detached {
      for await value in live.values {
        received.withLock { $0.append(value) }
      }
      ended.withLock { $0 = true }
    }
    #expect(await eventually { received.value == [0] })

    consumer.cancel()
    #expect(await eventually { ended.value }, "the sequence finishes on cancellation")
    live.set(1)
    #expect(received.value == [0])
  }

  @Test func worksWithoutTheMainActor() async {
    // The consumer runs on a detached task, the writer on a plain thread, and the main actor is blocked for
    // the whole exchange: a `values` that needed the main actor would time out.
    let live = MutableLiveData(0)
    let outcome = await MainActor.run { consumeWhileMainActorIsBlocked(live, until: 500) }
    #expect(outcome.completed, "the sequence delivered the final value without the main actor")
    #expect(outcome.seen.first == 0)
    #expect(outcome.seen.last == 500)
    #expect(zip(outcome.seen, outcome.seen.dropFirst()).allSatisfy { $0 < $1 }, "\(outcome.seen.prefix(20))")
  }

  @Test func severalConsumersEachGetTheLatest() async {
    let live = MutableLiveData(0)
    let consumers = (0..<3).map { _ in
      Task.detached { () -> Int? in
        for await value in live.values where value == 10 { return value }
        return nil
      }
    }
    // Each consumer may subscribe at any time, so keep setting the final value until all have seen it.
    let done = Locked(false)
    let writer = Task.detached {
      while !done.value {
        live.set(10)
        try? await Task.sleep(for: .milliseconds(1))
      }
    }
    for consumer in consumers {
      #expect(await consumer.value == 10)
    }
    done.withLock { $0 = true }
    await writer.value
  }
}

/// Blocks the calling actor while a task on a dedicated executor consumes `live.values` and a thread sets
/// 1...`last`: what is checked is that the sequence completes without the main actor.
private func consumeWhileMainActorIsBlocked(
  _ live: MutableLiveData<Int>, until last: Int
) -> (completed: Bool, seen: [Int]) {
  let seen = Locked<[Int]>([])
  let subscribed = DispatchSemaphore(value: 0)
  let finished = DispatchSemaphore(value: 0)
  // On a serial queue of its own, not on the cooperative pool: other suites, running in parallel, may hold
  // both cooperative threads of a two-core machine for tens of seconds (the consumer once waited 20–27 s for
  // one, and over 30 s under ThreadSanitizer).
  let consumer = Task.detached(executorPreference: SerialQueueExecutor(label: "LiveDataValuesTests.consumer"))
  {
    for await value in live.values {
      let isFirst = seen.withLock { seen -> Bool in
        seen.append(value)
        return seen.count == 1
      }
      if isFirst { subscribed.signal() }
      if value == last { break }
    }
    finished.signal()
  }
  guard subscribed.wait(timeout: .now() + .seconds(30)) == .success else {
    consumer.cancel()
    return (false, seen.value)
  }
  runOnThreadsBlocking(1) { _ in
    for value in 1...last { live.set(value) }
  }
  let completed = finished.wait(timeout: .now() + .seconds(30)) == .success
  consumer.cancel()
  return (completed, seen.value)
}
