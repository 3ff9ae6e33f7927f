import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `watch` run in process on its own thread, stopped the way SIGINT stops it.
@Suite(.ownThread) struct WatchCommandTests {
  /// Runs `watch` on a thread with an in-memory console until `body` returns, then stops it.
  func watching(
    _ arguments: [String], _ body: (Console) throws -> Void
  ) throws -> CommandResult {
    let console = Console.capturing()
    let finished = DispatchSemaphore(value: 0)
    let status = Locked<Int32>(-1)
    let thread = Thread {
      status.withLock { $0 = PLDTool.execute(arguments, console: console) }
      finished.signal()
    }
    thread.start()
    #expect(
      waitUntil { console.capturedError.contains("Watching") },
      "watch did not start: \(console.capturedError)")
    // Once only: the thread signals `finished` once, and a second wait for it took the whole 5 s.
    var stopped = false
    defer {
      if !stopped {
        console.requestStop()
        _ = finished.wait(timeout: .now() + 5)
      }
    }
    try body(console)
    console.requestStop()
    stopped = true
    #expect(finished.wait(timeout: .now() + 2) == .success)
    return CommandResult(
      stdout: console.capturedOutput, stderr: console.capturedError, status: status.withLock { $0 })
  }

  @Test func printsEachNewVersionOfEveryKey() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = try watching(["watch", path, "--json"]) { console in
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      let counter = try store.liveData("counter", default: 0)
      let brandNew = try store.liveData("brand new", default: [String]())
      // One commit, so that one poll sees all three versions: printed keys in byte order.
      try store.transaction {
        try counter.set(6)
        try counter.set(7)
        try brandNew.set(["x"])
      }
      #expect(waitUntil { console.capturedOutput.split(separator: "\n").count >= 3 })
    }
    #expect(result.status == 0)
    let lines = try result.jsonLines()
    #expect(
      lines.map { "\($0["key"] ?? "")/\($0["version"] ?? "")" } == ["brand new/1", "counter/6", "counter/7"])
    #expect(lines.map { $0["value"] as? Int } == [nil, 6, 7])
  }

  @Test func watchesOneKeyOnly() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = try watching(["watch", path, "theme"]) { console in
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      try store.liveData("counter", default: 0).set(50)
      try store.liveData("theme", default: "").set("dark\u{1B}[2J")
      #expect(waitUntil { console.capturedOutput.contains("\n") })
    }
    let line = try #require(result.stdout.split(separator: "\n").first)
    #expect(line.hasPrefix("theme  2  "))
    #expect(line.hasSuffix(#"  "dark\u001b[2J""#))
    #expect(!result.stdout.contains("counter"))
    #expect(!result.stdout.contains("\u{1B}"))
  }

  @Test func sinceReplaysTheStoredVersionsOfAKeyThenGoesLive() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = try watching(["watch", path, "counter", "--since", "3", "--json"]) { console in
      #expect(waitUntil { console.capturedOutput.split(separator: "\n").count >= 2 })
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      try store.liveData("counter", default: 0).set(60)
      #expect(waitUntil { console.capturedOutput.split(separator: "\n").count >= 3 })
    }
    #expect(result.status == 0)
    let lines = try result.jsonLines()
    #expect(lines.map { $0["version"] as? Int } == [4, 5, 6])
    #expect(lines.map { $0["value"] as? Int } == [4, 5, 60])
  }

  @Test func versionsPrunedBeforeTheyArePrintedAreNamedNotSkippedSilently() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = try watching(["watch", path, "counter", "--json"]) { console in
      // Written and pruned in one transaction by another client: the watcher can never see 6 to 8.
      try SchemaEditor.execute(
        """
        BEGIN IMMEDIATE;
        INSERT INTO pld_values (key, version, written_at, payload)
          VALUES ('counter', 6, 0, '6'), ('counter', 7, 0, '7'), ('counter', 8, 0, '8'), ('counter', 9, 0, '9');
        DELETE FROM pld_values WHERE key = 'counter' AND version < 9;
        COMMIT;
        """, path: path)
      #expect(waitUntil { console.capturedOutput.contains("\n") })
    }
    #expect(result.status == 0)
    #expect(try result.jsonLines().map { $0["version"] as? Int } == [9])
    #expect(
      result.stderr.contains("Versions 6 to 8 of key \"counter\" were pruned before they could be printed."))
  }
}

/// Polls `condition` every 10 ms for up to `timeout` seconds.
func waitUntil(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    usleep(10_000)
  }
  return condition()
}

extension WatchCommandTests {
  /// `watch DB --prefix todo/`: the members of a collection, new ones included, nothing else.
  @Test func watchesTheKeysOfAPrefixNewOnesIncluded() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = try watching(["watch", path, "--prefix", "todo/", "--json"]) { console in
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      let todos = try store.collection("todo", of: Int.self)
      try store.liveData("counter", default: 0).set(50)
      try store.liveData("todox", default: 0).set(1)
      try todos.set(1, for: "a")
      try todos.set(2, for: "b/c")
      #expect(waitUntil { console.capturedOutput.split(separator: "\n").count >= 2 })
    }
    let lines = try result.jsonLines()
    #expect(lines.map { "\($0["key"] ?? "")/\($0["version"] ?? "")" } == ["todo/a/1", "todo/b/c/1"])
  }
}
