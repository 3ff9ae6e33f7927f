import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

@Suite(.ownThread, .serialized) struct ExternalChangeTests {
  /// The latency is measured by watching `version` from this thread: the store's poller moves it without
  /// the main actor or the cooperative pool, which other suites keep busy while tests run in parallel.
  @MainActor
  @Test func observerReceivesAnotherProcessesWriteWithin250Milliseconds() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("shared.db")
    let store = try PersistentStore(path: path)
    let counter = try store.liveData("counter", default: 0)
    let received = DeliveryRecorder<Int>()
    let observer = counter.observeForever(receiveCurrent: false, received.callback)
    defer { observer.cancel() }

    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "42"])
    #expect(child.readLine() == "ack 1")
    let acknowledged = ContinuousClock.now
    while counter.version < 1, ContinuousClock.now - acknowledged < .seconds(5) {
      usleep(500)
    }
    let latency = ContinuousClock.now - acknowledged
    child.wait()
    #expect(counter.value == 42)
    // Under a sanitizer everything runs several times slower; the bound is about the store.
    let bound: Duration =
      ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] == nil
      ? .milliseconds(250) : .seconds(2)
    #expect(latency < bound, "external write arrived after \(latency)")

    // The main-actor observer gets it too, exactly once.
    let deadline = ContinuousClock.now + .seconds(5)
    while received.count == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    received.expect([42])
    #expect(counter.version == 1)
  }

  @MainActor
  @Test func pldToolSetReachesTheObserversOfARunningProcess() async throws {
    let tool = ChildProcess.product("pld-tool")
    try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built with the tests")
    let folder = try TemporaryDirectory()
    let path = folder.path("service.db")
    let store = try PersistentStore(path: path)
    let settings = try store.liveData("settings", default: Settings(theme: "light", fontSize: 12))
    try settings.set(Settings(theme: "light", fontSize: 14))
    let received = DeliveryRecorder<Settings>()
    let observer = settings.observeForever(receiveCurrent: false, received.callback)
    defer { observer.cancel() }

    let run = try ChildProcess(tool, ["set", path, "settings", #"{"theme": "dark", "fontSize": 20}"#])
    _ = run.readAllLines()
    run.wait()
    #expect(run.exitCode == 0)
    let deadline = ContinuousClock.now + .seconds(5)
    while received.count == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    received.expect([Settings(theme: "dark", fontSize: 20)])
    #expect(settings.version == 2)
    #expect(try settings.history().map(\.version) == [2, 1])
  }

  @Test func twoProcessesWritingTheSameKeyProduceGapFreeVersions() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("race.db")
    // Create the file first so both children open an existing store.
    try PersistentStore(path: path).close()

    let writers = try ["A", "B"].map { tag in
      try ChildProcess(ChildProcess.testChildPath, ["write", path, "shared", "500", "1000", tag])
    }
    for writer in writers {
      let lines = writer.readAllLines()
      writer.wait()
      #expect(writer.exitCode == 0, "child output: \(lines)")
      #expect(lines.contains("final 1000"), "child output: \(lines)")
      #expect(lines.contains { $0.hasPrefix("order ok") }, "child output: \(lines)")
    }

    let store = try PersistentStore(path: path)
    let shared = try store.liveData("shared", default: Tagged(tag: "", seq: 0))
    let history = try shared.history()
    #expect(history.map(\.version) == Array((1...1000).reversed()))
    for tag in ["A", "B"] {
      // Each writer's values appear in the order it wrote them, all 500 of them.
      let sequence = history.reversed().filter { $0.value.tag == tag }.map(\.value.seq)
      #expect(sequence == Array(1...500))
    }
    #expect(shared.value == history.first?.value)
  }

  @MainActor
  @Test func externalVersionsArriveInOrderAndNeverTwice() async throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("order.db")
    let store = try PersistentStore(path: path)
    let data = try store.liveData("shared", default: Tagged(tag: "", seq: 0))
    let seen = DeliveryRecorder<Tagged>()
    let observer = data.observeForever(receiveCurrent: false, seen.callback)
    defer { observer.cancel() }
    var streamed: [Tagged] = []
    let consumer = Task.detached {
      var collected: [Tagged] = []
      for await value in data.values {
        collected.append(value)
        if value.seq == 300 { break }
      }
      return collected
    }

    let writer = try ChildProcess(ChildProcess.testChildPath, ["write", path, "shared", "300", "300", "X"])
    let lines = writer.readAllLines()
    writer.wait()
    #expect(writer.exitCode == 0, "child output: \(lines)")
    let deadline = ContinuousClock.now + .seconds(5)
    while seen.all.last?.seq != 300, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    streamed = await consumer.value
    #expect(data.version == 300)
    #expect(data.value == Tagged(tag: "X", seq: 300))
    // Polling may coalesce the other process's versions: any strictly increasing run that ends at 300.
    let observed = seen.takePending().map(\.seq)
    #expect(observed.last == 300)
    #expect(observed == observed.sorted() && Set(observed).count == observed.count, "\(observed)")
    // The first element is the value when the consumer began: the starting value (seq 0), or, when the
    // store had already caught up by then, a later one — even 300.
    let streamedSeqs = streamed.map(\.seq)
    #expect(streamedSeqs == streamedSeqs.sorted() && Set(streamedSeqs).count == streamedSeqs.count)
    #expect(streamedSeqs.last == 300)
  }

  @Test func writesAfterAnExternalWriteContinueTheVersionSequence() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("continue.db")
    var options = StoreOptions()
    options.externalChangePollInterval = nil  // the write itself must find the newest version
    let store = try PersistentStore(path: path, options: options)
    let counter = try store.liveData("counter", default: 0)
    try counter.set(1)
    let child = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "2"])
    #expect(child.readLine() == "ack 2")
    child.wait()
    try counter.set(3)
    #expect(counter.version == 3)
    #expect(try counter.history().map(\.version) == [3, 2, 1])
    // update starts again from the external version when it finds a newer one.
    let child2 = try ChildProcess(ChildProcess.testChildPath, ["set", path, "counter", "10"])
    #expect(child2.readLine() == "ack 4")
    child2.wait()
    let result = try counter.update { $0 += 1 }
    #expect(result == 11)
    #expect(counter.version == 5)
  }

  @Test func pollingStopsWhenTheStoreIsClosedOrReleased() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("stop.db")
    weak var released: StoreDatabase?
    do {
      let store = try PersistentStore(path: path)
      released = store.database
      _ = try store.liveData("a", default: 1)
    }
    // Nothing — no timer, no live value — keeps the database alive once the app lets go.
    #expect(released == nil)

    let store = try PersistentStore(path: path)
    try store.close()
    // The file is released too: the same process can open it again.
    let again = try PersistentStore(path: path)
    try again.close()
  }
}
