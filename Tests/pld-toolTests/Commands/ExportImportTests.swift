import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `export` writes JSON Lines that `import` reads back; `import` is all or nothing.
@Suite struct ExportImportTests {
  @Test func exportPrintsEveryVersionByKeyThenVersion() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["export", path])
    #expect(result.status == 0, "\(result)")
    let lines = try result.jsonLines()
    #expect(lines.count == 9)
    #expect(
      lines.map { "\($0["key"] ?? "")/\($0["version"] ?? "")" } == [
        "counter/1", "counter/2", "counter/3", "counter/4", "counter/5",
        "settings/1", "settings/2", "settings/3", "theme/1",
      ])
    #expect(lines.last?["value"] as? String == "solarized")
    #expect(
      Swift.Set(lines.flatMap(\.keys)) == ["key", "version", "writtenAt", "size", "schemaVersion", "value"])

    let one = runInProcess(["export", path, "theme"])
    #expect(one.stdout.split(separator: "\n").count == 1)
    #expect(
      runInProcess(["export", path, "nope"]).stderr == "Error: Key \"nope\" is not stored in \"\(path)\".\n")
  }

  @Test func importReproducesAnExportedStore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let source = try directory.makeSampleStore()
    let exported = runInProcess(["export", source]).stdout
    let file = try directory.write(exported, to: "backup.jsonl")
    let copy = directory.path("copy.db")

    let result = runInProcess(["import", copy, file, "--create"])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "Imported 9 versions of 3 keys from \"\(file)\".\n")

    // Same keys, versions and values (times are those of the import).
    func withoutTimes(_ text: String) throws -> [String] {
      try CommandResult(stdout: text, stderr: "", status: 0).jsonLines().map { line in
        var line = line
        line["writtenAt"] = nil
        return String(
          decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self)
      }
    }
    #expect(try withoutTimes(runInProcess(["export", copy]).stdout) == (try withoutTimes(exported)))

    let store = try PersistentStore(path: copy)
    defer { try? store.close() }
    let settings = try store.liveData("settings", default: Settings(theme: "", fontSize: 0, tags: []))
    #expect(settings.value == Settings(theme: "dark", fontSize: 14, tags: ["b"]))
    #expect(settings.version == 3)
  }

  @Test func importAppendsNewVersionsInFileOrder() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let file = try directory.write(
      """
      {"key":"counter","value":100}

      {"key":"fresh","value":{"a":[1,2]}}\r
      {"key":"counter","value":200,"version":1,"writtenAt":"ignored"}
      """, to: "more.jsonl")

    let result = runInProcess(["import", path, file, "--json"])
    #expect(result.status == 0, "\(result)")
    let json = try #require(try result.json() as? [String: Any])
    #expect(json["imported"] as? Int == 3)
    let keys = try #require(json["keys"] as? [[String: Any]])
    #expect(keys.map { "\($0["key"] ?? "")=\($0["version"] ?? "")" } == ["counter=7", "fresh=1"])

    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let counter = try store.liveData("counter", default: 0)
    #expect(try counter.history(limit: 2).map(\.value) == [200, 100])
  }

  @Test(arguments: [
    (
      #"{"key":"a","value":1}"# + "\n" + #"{"key":"b","value":}"#,
      "Line 2 of \"FILE\" is not valid JSON: unexpected character \"}\", expected a value at line 1, column 20."
    ),
    (#"{"key":"a","value":1}"# + "\n\n" + #"[1]"#, "Line 3 of \"FILE\" is not a JSON object but an array."),
    (#"{"value":1}"#, "Line 1 of \"FILE\" has no \"key\" string."),
    (#"{"key":"a","value":1}"# + "\n" + #"{"key":"b"}"#, "Line 2 of \"FILE\" has no \"value\"."),
    (#"{"key":"","value":1}"#, "Line 1 of \"FILE\" has an empty \"key\"."),
  ])
  func importRefusesABadLineAndWritesNothing(content: String, message: String) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let file = try directory.write(content, to: "bad.jsonl")
    let before = directory.snapshot("app.db")

    let result = runInProcess(["import", path, file])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "Error: " + message.replacingOccurrences(of: "FILE", with: file) + "\n")
    #expect(directory.snapshot("app.db") == before)
  }

  @Test func importOfAMissingFileNamesIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let result = runInProcess(["import", path, directory.path("nope.jsonl")])
    #expect(result.status == 1)
    #expect(result.stderr == "Error: \"\(directory.path("nope.jsonl"))\" does not exist.\n")
  }

  @Test func progressIsDrawnOnlyOnATerminal() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let lines = (1...3_000).map { #"{"key":"k\#($0 % 7)","value":\#($0)}"# }.joined(separator: "\n")
    let file = try directory.write(lines, to: "many.jsonl")

    let quiet = runInProcess(["import", path, file])
    #expect(quiet.status == 0, "\(quiet)")
    #expect(quiet.stderr.isEmpty)
    // A terminal sees progress only for operations that last; an empty progress is never drawn.
    let terminal = runInProcess(["verify", path], errorIsTerminal: true)
    #expect(terminal.status == 0)
    #expect(!terminal.stderr.contains("\n"))
  }
}
