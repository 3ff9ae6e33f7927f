import Foundation
import Logging
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataBackend

/// `PersistentStore.events()`: what would reach only a logger reaches the app.
@Suite(.timeLimit(deadlockTimeLimit)) struct StoreEventTests {
  @Test func aVersionWrittenElsewhereThatDoesNotDecodeIsAnEvent() async throws {
    let folder = try TemporaryDirectory("events")
    let path = folder.path("flags.db")
    let store = try PersistentStore(path: path)
    let count = try store.liveData("count", default: 0)
    try count.set(1)
    var first = store.events().makeAsyncIterator()
    var second = store.events().makeAsyncIterator()
    // Another process writes a value of the wrong shape.
    let tool = try ChildProcess(
      ChildProcess.product("pld-tool"),
      ["set", path, "count", #""not a number""#], mergingStandardError: true)
    tool.wait()
    #expect(tool.exitCode == 0, "\(tool.readAllLines())")
    let event = await first.next()
    guard case .undecodableVersion(let key, let version, let error)? = event,
      case .undecodable(let errorKey, let errorVersion, _) = error
    else {
      Issue.record("expected an undecodable version, got \(String(describing: event))")
      return
    }
    #expect(key == "count" && version == 2 && errorKey == "count" && errorVersion == 2)
    #expect(await second.next() == event, "every stream gets every event")
    #expect(count.value == 1 && count.version == 1, "the live value keeps its last version")
    try store.close()
    #expect(await first.next() == nil, "closing the store finishes the streams")
    var late = store.events().makeAsyncIterator()
    #expect(await late.next() == nil, "a stream asked for after close finishes at once")
  }

  @Test func anUndecodableVersionIsReportedOnceHoweverManyCommitsFollowIt() async throws {
    let folder = try TemporaryDirectory("events")
    let path = folder.path("flags.db")
    let warnings = Locked<[String]>([])
    var logger = Logger(label: "events") { _ in
      RecordingLogHandler(logLevel: .warning) { _, message, _ in warnings.withLock { $0.append("\(message)") }
      }
    }
    logger.logLevel = .warning
    var options = StoreOptions()
    options.logger = logger
    let store = try PersistentStore(path: path, options: options)
    let count = try store.liveData("count", default: 0)
    let marker = try store.liveData("marker", default: 0)
    try count.set(1)
    var events = store.events().makeAsyncIterator()
    func tool(_ arguments: String...) throws {
      let child = try ChildProcess(
        ChildProcess.product("pld-tool"), ["set", path] + arguments,
        mergingStandardError: true)
      child.wait()
      #expect(child.exitCode == 0, "\(child.readAllLines())")
    }
    func settled(at version: Int64) async throws {
      try tool("marker", "\(version)")
      #expect(await eventually { marker.version == version }, "the marker's version \(version) arrived")
    }
    // Version 2 of "count" does not decode; three commits to other keys follow it, each a new check.
    try tool("count", #""not a number""#)
    try await settled(at: 1)
    for other in 1...3 { try tool("other", "\(other)") }
    try await settled(at: 2)
    // A newer undecodable version is reported again, once.
    try tool("count", #""still not a number""#)
    for other in 4...6 { try tool("other", "\(other)") }
    try await settled(at: 3)
    #expect(count.value == 1 && count.version == 1, "the live value keeps its last version")
    try store.close()
    var seen: [String] = []
    while let event = await events.next() {
      if case .undecodableVersion(let key, let version, _) = event { seen.append("\(key) \(version)") }
    }
    #expect(seen == ["count 2", "count 3"])
    let logged = warnings.withLock { $0 }.filter { $0.contains("does not decode") }
    #expect(logged.count == 2, "one warning per undecodable version: \(logged)")
  }

  @Test func startingPastAnUndecodableVersionIsAnEvent() async throws {
    let folder = try TemporaryDirectory("events")
    let path = folder.path("state.db")
    do {
      let store = try PersistentStore(path: path)
      let value = try store.liveData("value", default: "")
      try value.set("one")
      try value.set("two")
      try store.close()
    }
    try SQLiteCLI.execute(path, "UPDATE pld_values SET payload = '{}' WHERE key = 'value' AND version = 2")
    for (policy, startedFrom) in [(DecodeFailurePolicy.useDefault, nil), (.lastDecodable, Int64(1))] {
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: policy))
      var events = store.events().makeAsyncIterator()
      let value = try store.liveData("value", default: "default")
      #expect(value.version == 2)
      let event = await events.next()
      guard case .restoredPastUndecodable("value", 2, let from, .undecodable("value", 2, _))? = event else {
        Issue.record("\(policy): got \(String(describing: event))")
        continue
      }
      #expect(from == startedFrom, "\(policy)")
      try store.close()
    }
  }

  @Test func aReaderThatFallsBehindKeepsTheNewestEvents() async throws {
    let hub = StoreEventHub()
    var events = hub.stream().makeAsyncIterator()
    let error = PersistentLiveDataError.undecodable(key: "k", version: 1, reason: "test")
    for version in 1...Int64(StoreEventHub.bufferSize + 10) {
      hub.emit(.undecodableVersion(key: "k", version: version, error: error))
    }
    #expect(await events.next() == .undecodableVersion(key: "k", version: 11, error: error))
    hub.finish()
  }
}
