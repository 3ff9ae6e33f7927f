import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `keys` shows a key's recorded retention, and `prune` never deletes what it keeps.
@Suite(.ownThread) struct RetentionCommandTests {
  /// flags keeps every version, heartbeat its last 3 (recorded), counter has none: 10 versions each.
  static func makeStore(in directory: TemporaryDirectory) throws -> String {
    let path = directory.path("retention.db")
    let store = try PersistentStore(path: path)
    let flags = try store.liveData("flags", default: 0, retention: .all)
    let heartbeat = try store.liveData("heartbeat", default: 0, retention: .last(3))
    let counter = try store.liveData("counter", default: 0)
    for value in 1...10 {
      try flags.set(value)
      try counter.set(value)
    }
    for value in 1...10 { try heartbeat.set(value) }
    try store.close()
    return path
  }

  static func versions(_ path: String) throws -> [String: Int] {
    let keys = try #require(try runInProcess(["keys", path, "--json"]).json() as? [[String: Any]])
    var versions: [String: Int] = [:]
    for key in keys { versions[key["key"] as? String ?? "?"] = key["versions"] as? Int }
    return versions
  }

  @Test func keysShowsTheRecordedRetention() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(in: directory)
    let table = runInProcess(["keys", path])
    #expect(table.status == 0, "\(table)")
    let lines = table.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first?.hasSuffix("RETENTION") == true, "\(lines)")
    let retentionColumn = Dictionary(
      uniqueKeysWithValues: lines.dropFirst().map { line in
        (String(line.prefix { $0 != " " }), line.split(separator: " ").last.map(String.init) ?? "")
      })
    #expect(retentionColumn == ["counter": "-", "flags": "all", "heartbeat": "3"], "\(lines)")
    #expect(lines.contains { $0.hasPrefix("heartbeat") && $0.hasSuffix("last 3") })
    let json = try #require(try runInProcess(["keys", path, "--json"]).json() as? [[String: Any]])
    let retentions = json.map { "\($0["key"] as? String ?? "?")=\($0["retention"].map { "\($0)" } ?? "?")" }
    #expect(retentions == ["counter=<null>", "flags=all", "heartbeat=3"], "\(retentions)")
  }

  @Test func pruneWithKeepNeverDeletesWhatARecordedRetentionKeeps() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(in: directory)
    let result = runInProcess(["prune", path, "--keep", "1"])
    #expect(result.status == 0, "\(result)")
    #expect(
      result.stdout
        == """
        Deleted 16 versions from 2 of 3 keys; kept the newest 1 of each (more where a key's retention says so).
        Key flags kept every version: its recorded retention.
        Key heartbeat kept the newest 3 versions: its recorded retention.

        """)
    #expect(try Self.versions(path) == ["counter": 1, "flags": 10, "heartbeat": 3])

    let one = runInProcess(["prune", path, "flags", "--keep", "2", "--json"])
    let outcome = try #require(try one.json() as? [String: Any])
    #expect(outcome["deleted"] as? Int == 0)
    #expect(outcome["keysPruned"] as? Int == 0)
    #expect(outcome["keysConsidered"] as? Int == 1)
    #expect((outcome["keptByRetention"] as? [String: Any])?["flags"] as? String == "all")
    #expect(try Self.versions(path)["flags"] == 10)
  }

  @Test func pruneWithoutKeepAppliesEachKeysRecordedRetention() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("retention.db")
    do {
      // Written with a store option of .all, then the heartbeat's retention recorded as 4.
      let store = try PersistentStore(path: path)
      let heartbeat = try store.liveData("heartbeat", default: 0)
      let counter = try store.liveData("counter", default: 0)
      for value in 1...10 {
        try heartbeat.set(value)
        try counter.set(value)
      }
      _ = try store.liveData("heartbeat", default: 0, retention: .last(4))
      try store.close()
    }
    #expect(try Self.versions(path) == ["counter": 10, "heartbeat": 10], "hidden, not yet deleted")
    let result = runInProcess(["prune", path])
    #expect(
      result
        == CommandResult(
          stdout: "Deleted 6 versions from 1 of 2 keys by their recorded retention.\n", stderr: "", status: 0)
    )
    #expect(try Self.versions(path) == ["counter": 10, "heartbeat": 4])
  }
}
