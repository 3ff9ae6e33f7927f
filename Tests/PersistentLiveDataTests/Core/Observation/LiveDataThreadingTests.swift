import Testing

@testable import PersistentLiveData

/// Writes from any isolation: synchronous delivery on the main actor, scheduled and coalesced delivery from
/// elsewhere, atomic `update`.
@MainActor @Suite struct LiveDataThreadingTests {
  @Test func setFromMainActorNotifiesBeforeReturning() {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([0])
    live.set(1)
    recorder.expect([1])
    live.update { $0 += 1 }
    recorder.expect([2])
  }

  @Test func setFromDetachedTaskChangesValueBeforeReturningAndDeliversOnMainActor() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([0])

    let seen = await Task.detached {
      live.set(7)
      return (live.value, live.version)
    }.value
    #expect(seen.0 == 7)
    #expect(seen.1 == 1)

    await recorder.waitForLast(7)
    recorder.expect([7])
  }

  @Test func setFromPlainThreadIsNotDeliveredOnThatThread() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([0])

    // The main actor is blocked until the thread is done: a callback can only have run on that thread.
    let seen = Locked<(Int, Int64)>((0, 0))
    #expect(
      runOnThreadsBlocking(1) { _ in
        live.set(1)
        seen.withLock { $0 = (live.value, live.version) }
      })
    #expect(seen.value.0 == 1, "value changes before set returns")
    #expect(seen.value.1 == 1, "version changes before set returns")
    #expect(live.value == 1)
    recorder.expectNothing("delivery is scheduled on the main actor, not run on the writer's thread")

    await recorder.waitForLast(1)
    recorder.expect([1])
  }

  @Test func setFromAnotherActorIsDeliveredOnMainActor() async {
    let live = MutableLiveData("start")
    let recorder = DeliveryRecorder<String>()
    live.observeForever(recorder.callback)
    recorder.expect(["start"])

    let writer = Writer()
    let seen = await writer.write("from actor", to: live)
    #expect(seen == "from actor")
    await recorder.waitForLast("from actor")
    recorder.expect(["from actor"])
  }

  @Test func updateFromAnotherActorIsDeliveredOnMainActor() async {
    let live = MutableLiveData("a")
    let recorder = DeliveryRecorder<String>()
    live.observeForever(recorder.callback)
    recorder.expect(["a"])

    let result = await Writer().append("b", to: live)
    #expect(result == "ab")
    #expect(live.version == 1)
    await recorder.waitForLast("ab")
    recorder.expect(["ab"])
  }

  @Test func offMainSetsWhileMainActorIsBusyAreCoalescedToTheLatest() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([0])

    // All 500 sets happen while the main actor is blocked here, so by the time a delivery can run the
    // latest value is 500: a coalescing implementation delivers it once and nothing older.
    #expect(
      runOnThreadsBlocking(1) { _ in
        for value in 1...500 { live.set(value) }
      })
    #expect(live.value == 500)
    #expect(live.version == 500)
    recorder.expectNothing()

    await recorder.waitForLast(500)
    recorder.expect([500])
  }

  @Test func manyOffMainSetsDeliverAnIncreasingSequenceEndingOnTheLatest() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    let sets = 5_000

    let writer = Task.detached {
      for value in 1...sets {
        live.set(value)
        if value.isMultiple(of: 100) { await Task.yield() }
      }
    }
    await writer.value
    await recorder.waitForLast(sets)

    let seen = recorder.takePending()
    #expect(seen.last == sets)
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "strictly increasing, no repeats")
    #expect(seen.count <= sets)
  }

  @Test func setsFromSeveralThreadsEndOnTheFinalValue() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)

    let finished = await runOnThreads(4) { _ in
      for _ in 0..<500 { live.update { $0 += 1 } }
    }
    #expect(finished)
    #expect(live.value == 2_000)
    await recorder.waitForLast(2_000)
    let seen = recorder.takePending()
    #expect(
      zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "a delivery never goes back to an older value")
    #expect(seen.count <= 2_000)
  }

  @Test func mainActorSetAfterOffMainSetsWins() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)

    #expect(runOnThreadsBlocking(1) { _ in live.set(1) })
    live.set(2)
    recorder.expect([2], "the main-actor set delivers the latest version synchronously")

    // A later off-main set is a barrier: once it is delivered, the delivery scheduled by set(1) has run too,
    // and it must not have delivered the older value.
    await Task.detached { live.set(3) }.value
    await recorder.waitForLast(3)
    recorder.expect([3])
  }

  @Test func updateIsAtomicUnderContention() async {
    let live = MutableLiveData(0)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(receiveCurrent: false, recorder.callback)
    let threads = 6
    let updates = 1_000

    let finished = await runOnThreads(threads) { _ in
      for _ in 0..<updates { live.update { $0 += 1 } }
    }
    #expect(finished)
    #expect(live.value == threads * updates)
    #expect(live.version == Int64(threads * updates))
    await recorder.waitForLast(threads * updates)
    _ = recorder.takePending()
  }

  @Test func updateReturnsTheValueItWrote() {
    let live = MutableLiveData(0)
    let results = Locked<[Int]>([])
    #expect(
      runOnThreadsBlocking(4) { _ in
        for _ in 0..<250 {
          let written = live.update { $0 += 1 }
          results.withLock { $0.append(written) }
        }
      })
    #expect(results.value.sorted() == Array(1...1_000), "each update sees and returns a distinct value")
  }

  @Test func throwingTransformChangesNothing() async throws {
    let live = MutableLiveData(10)
    let recorder = DeliveryRecorder<Int>()
    live.observeForever(recorder.callback)
    recorder.expect([10])

    #expect(throws: TransformFailure.self) {
      try live.update { value in
        value = 99
        throw TransformFailure()
      }
    }
    #expect(live.value == 10)
    #expect(live.version == 0)
    recorder.expectNothing()

    let offMain = await Task.detached {
      do {
        try live.update { value in
          value += 1
          throw TransformFailure()
        }
        return false
      } catch {
        return error is TransformFailure
      }
    }.value
    #expect(offMain)
    #expect(live.value == 10)
    #expect(live.version == 0)
    live.dispatch()
    recorder.expectNothing()

    live.update { $0 += 1 }
    recorder.expect([11], "the next update works")
    #expect(live.version == 1)
  }
}

private struct TransformFailure: Error {}

/// An actor writing to a LiveData from its own isolation.
private actor Writer {
  func write(_ value: String, to live: MutableLiveData<String>) -> String {
    live.set(value)
    return live.value
  }

  func append(_ suffix: String, to live: MutableLiveData<String>) -> String {
    live.update { $0 += suffix }
  }
}
