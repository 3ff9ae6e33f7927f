import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import pld_tool

/// `inspect`, `keys`, `get`, `history` run in process against stores written by the library: what they
/// report matches what the library reports.
@Suite(.ownThread) struct ReadCommandTests {
  @Test func inspectReportsSchemaKeysVersionsAndIntegrity() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["inspect", path, "--json"])
    #expect(result.status == 0, "\(result)")
    let json = try #require(try result.json() as? [String: Any])
    #expect(json["schemaVersion"] as? Int == Migrator.latestVersion)
    #expect(json["journalMode"] as? String == "wal")
    #expect(json["keys"] as? Int == 3)
    #expect(json["versions"] as? Int == 9)
    #expect(json["access"] as? String == "readOnly")
    let integrity = try #require(json["integrity"] as? [String: Any])
    #expect(integrity["ok"] as? Bool == true)
    #expect((json["size"] as? Int ?? 0) >= (json["databaseSize"] as? Int ?? 0))

    let human = runInProcess(["inspect", path])
    #expect(human.status == 0)
    #expect(human.stdout.contains("Schema version:  \(Migrator.latestVersion)\n"))
    #expect(human.stdout.contains("Application:     none recorded\n"))
    #expect(json["application"] is NSNull)
    #expect(human.stdout.contains("Keys:            3\n"))
    #expect(human.stdout.contains("Versions:        9\n"))
    #expect(human.stdout.contains("Integrity:       ok\n"))
    #expect(human.stderr.isEmpty)
  }

  @Test func keysMatchWhatTheLibraryReports() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    let settings = try store.liveData("settings", default: Settings(theme: "light", fontSize: 12, tags: []))
    try settings.set(Settings(theme: "dark", fontSize: 13, tags: ["x"]))
    try settings.set(Settings(theme: "dark", fontSize: 14, tags: ["x"]))
    let counter = try store.liveData("counter", default: 0)
    try counter.set(41)
    let libraryKeys = try store.keys()
    let settingsHistory = try settings.history()
    let counterHistory = try counter.history()
    try store.close()

    let result = runInProcess(["keys", path, "--json"])
    #expect(result.status == 0, "\(result)")
    let keys = try #require(try result.json() as? [[String: Any]])
    #expect(keys.compactMap { $0["key"] as? String } == libraryKeys)
    let byKey = Dictionary(uniqueKeysWithValues: keys.map { ($0["key"] as? String ?? "", $0) })
    for (key, history) in [
      ("settings", settingsHistory.map(\.writtenAt)), ("counter", counterHistory.map(\.writtenAt)),
    ] {
      let entry = try #require(byKey[key])
      #expect(entry["version"] as? Int == history.count)
      #expect(entry["versions"] as? Int == history.count)
      #expect(entry["oldestVersion"] as? Int == 1)
      #expect(entry["writtenAt"] as? String == history.first.map(iso8601))
    }
    #expect(byKey["counter"]?["size"] as? Int == 2)  // "41"
  }

  @Test func keysTableAlignsItsColumns() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["keys", path])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[0].hasPrefix("KEY"))
    // Right-aligned numbers end in the same column as their heading.
    let versionEnd = try #require(lines[0].range(of: "VERSION")).upperBound.utf16Offset(in: lines[0])
    for line in lines.dropFirst() {
      let index = line.index(line.startIndex, offsetBy: versionEnd - 1)
      #expect(line[index].isNumber, "\(line)")
      #expect(line[line.index(after: index)] == " ")
    }
    #expect(lines[1].hasPrefix("counter "))
    #expect(lines[2].hasPrefix("settings "))
  }

  @Test func getPrintsTheLatestValueOrTheVersionAsked() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    let settings = try store.liveData("settings", default: Settings(theme: "light", fontSize: 12, tags: []))
    try settings.set(Settings(theme: "dark", fontSize: 13, tags: ["x"]))
    try settings.set(Settings(theme: "blue", fontSize: 14, tags: []))
    let latest = settings.value
    let first = try #require(try settings.value(at: 1))
    let history = try settings.history()
    try store.close()

    let human = runInProcess(["get", path, "settings"])
    #expect(human.status == 0, "\(human)")
    #expect(human.stdout == "{\n  \"fontSize\": 14,\n  \"tags\": [],\n  \"theme\": \"blue\"\n}\n")
    #expect(try JSONDecoder().decode(Settings.self, from: Data(human.stdout.utf8)) == latest)

    let versioned = runInProcess(["get", path, "settings", "--version", "1", "--json"])
    #expect(versioned.status == 0, "\(versioned)")
    let json = try #require(try versioned.json() as? [String: Any])
    #expect(json["key"] as? String == "settings")
    #expect(json["version"] as? Int == 1)
    #expect(json["writtenAt"] as? String == iso8601(history[1].writtenAt))
    #expect(try decode(Settings.self, from: json["value"] as Any) == first)
    #expect(json["size"] as? Int == #"{"fontSize":13,"tags":["x"],"theme":"dark"}"#.utf8.count)
  }

  @Test func historyMatchesTheLibrarysHistory() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    let counter = try store.liveData("counter", default: 0)
    for value in [10, 20, 30, 40] { try counter.set(value) }
    let history = try counter.history()
    let limited = try counter.history(limit: 2)
    try store.close()

    let result = runInProcess(["history", path, "counter", "--json"])
    #expect(result.status == 0, "\(result)")
    let rows = try #require(try result.json() as? [[String: Any]])
    #expect(rows.map { $0["version"] as? Int64 } == history.map(\.version))
    #expect(rows.map { $0["value"] as? Int } == history.map(\.value))
    #expect(rows.map { $0["writtenAt"] as? String } == history.map { iso8601($0.writtenAt) })

    let limitedResult = runInProcess(["history", path, "counter", "--limit", "2", "--json"])
    let limitedRows = try #require(try limitedResult.json() as? [[String: Any]])
    #expect(limitedRows.map { $0["version"] as? Int64 } == limited.map(\.version))

    let human = runInProcess(["history", path, "counter", "--limit", "2"])
    let lines = human.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines[0].hasPrefix("version 4 · "))
    #expect(lines[0].hasSuffix(" · 2 B · schema 1"))
    #expect(lines[1] == "40")
    #expect(lines[2] == "")
    #expect(lines[3].hasPrefix("version 3 · "))
    #expect(lines[4] == "30")
  }

  @Test func anEmptyStoreHasNoKeys() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeStore()

    let result = runInProcess(["keys", path])
    #expect(result.status == 0)
    #expect(result.stdout == "No keys are stored in \"\(path)\".\n")
    #expect(runInProcess(["keys", path, "--json"]).stdout == "[]\n")
    #expect(runInProcess(["export", path]).stdout == "")
  }

  /// An empty (0-byte) file is no store: every command refuses it with one sentence and a non-zero
  /// status, as a missing file, and leaves it as it was (0 bytes, its mode, no -wal or -shm beside it).
  @Test func aZeroByteFileIsRefusedByEveryCommandAndLeftAsItIs() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.write("", to: "empty.db")
    #expect(chmod(path, 0o666) == 0)
    let lines = try directory.write(#"{"key":"k","value":1}"# + "\n", to: "in.jsonl")
    let notAStore = "Error: \"\(path)\" is an empty file, not a store.\n"
    let suggestingCreate = "Error: No store at \"\(path)\" (an empty file); pass --create to make it one.\n"

    let commands: [(arguments: [String], message: String)] = [
      (["inspect"], notAStore), (["inspect", "--json"], notAStore), (["keys"], notAStore),
      (["keys", "--salvage"], notAStore), (["get", "k"], notAStore), (["history", "k"], notAStore),
      (["diff", "k", "1", "2"], notAStore), (["export"], notAStore), (["export", "--salvage"], notAStore),
      (["verify"], notAStore), (["verify", "--json"], notAStore), (["watch"], notAStore),
      (["backup", directory.path("copy.db")], notAStore), (["rollback", "k", "1"], notAStore),
      (["prune", "--keep", "1"], notAStore), (["delete", "k"], notAStore),
      (["set", "k", "1"], suggestingCreate),
      (["set", "k", "1", "--json"], suggestingCreate), (["import", lines], suggestingCreate),
    ]
    for (arguments, message) in commands {
      let command = [arguments[0], path] + arguments.dropFirst()
      #expect(runInProcess(command) == CommandResult(stdout: "", stderr: message, status: 1), "\(command)")
    }
    #expect(FileManager.default.contents(atPath: path) == Data())
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o666)
    for companion in ["-wal", "-shm", "-journal"] {
      #expect(!FileManager.default.fileExists(atPath: path + companion), "\(companion)")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path("copy.db")))
  }
}
