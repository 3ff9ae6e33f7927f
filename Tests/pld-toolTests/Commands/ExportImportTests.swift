import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `export` writes JSON Lines that `import` reads back; `import` is all or nothing.
@Suite(.ownThread) struct ExportImportTests {
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
    #expect(
      result.stdout == "Imported 9 versions of 3 keys from \"\(file)\" with their versions and times.\n")

    // Into an empty store, a faithful restore: the same keys, versions, times, schema versions and values.
    #expect(runInProcess(["export", copy]).stdout == exported)

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
      {"key":"counter","value":200,"version":1,"writtenAt":"2020-01-01T00:00:00.000Z"}
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

  /// A key the store has (or had), lines without versions, or --renumber: new versions, stamped now.
  @Test func importRestoresOnlyKeysTheStoreNeverHadAndOnlyWhenAsked() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    do {
      let store = try PersistentStore(path: path)
      for value in 1...3 { try store.liveData("deleted", default: 0).set(value) }
      try store.removeKey("deleted")  // took version 4
      try store.close()
    }
    let file = try directory.write(
      """
      {"key":"exact","version":5,"writtenAt":"2020-01-01T00:00:00.250Z","schemaVersion":2,"value":"a"}
      {"key":"exact","version":6,"writtenAt":"2020-01-02T00:00:00Z","value":"b"}
      {"key":"gapped","version":2,"writtenAt":"2020-01-01T00:00:00.000Z","value":1}
      {"key":"gapped","version":9,"writtenAt":"2020-01-01T00:00:00.000Z","value":2}
      {"key":"last","version":9223372036854775807,"writtenAt":"2020-01-01T00:00:00.000Z","value":1}
      {"key":"deleted","version":1,"writtenAt":"2020-01-01T00:00:00.000Z","value":10}
      {"key":"unordered","version":2,"writtenAt":"2020-01-01T00:00:00.000Z","value":1}
      {"key":"unordered","version":2,"writtenAt":"2020-01-01T00:00:00.000Z","value":2}
      {"key":"partial","version":3,"value":1}
      """, to: "mixed.jsonl")
    let result = runInProcess(["import", path, file, "--json"])
    #expect(result.status == 0, "\(result)")
    let keys = try #require(try result.json() as? [String: Any])["keys"] as? [[String: Any]]
    #expect(
      keys?.map { "\($0["key"] ?? "")=\($0["version"] ?? "")/\($0["restored"] ?? "")" } == [
        "exact=6/1", "gapped=2/0", "last=1/0", "deleted=5/0", "unordered=2/0", "partial=1/0",
      ])
    // A key whose exported versions would break the store (a gap, no number left) is renumbered, and
    // said so; so is one out of order or without times, which no export writes (no note for the key the
    // store already had).
    #expect(
      result.stderr == """
        Note: Key "gapped" was given new versions: its exported ones could not be kept (versions 3 to 8 \
        are missing before line 4).
        Note: Key "last" was given new versions: its exported ones could not be kept (line 5 has version \
        9223372036854775807, too close to the last number for later writes).
        Note: Key "unordered" was given new versions: its exported ones could not be kept (line 8 has \
        version 2 after 2).
        Note: Key "partial" was given new versions: its exported ones could not be kept (line 9 has no \
        writtenAt).

        """, "\(result.stderr)")
    #expect(runInProcess(["verify", path]).status == 0, "the import left a store verify accepts")
    let history = try #require(
      try runInProcess(["history", path, "exact", "--json"]).json() as? [[String: Any]])
    #expect(history.map { $0["version"] as? Int } == [6, 5])
    #expect(
      history.map { $0["writtenAt"] as? String } == ["2020-01-02T00:00:00.000Z", "2020-01-01T00:00:00.250Z"])
    #expect(history.map { $0["schemaVersion"] as? Int } == [2, 2])
    let store = try PersistentStore(path: path)
    #expect(try store.liveData("deleted", default: 0).history().map(\.version) == [5])
    try store.close()
    #expect(
      runInProcess(["set", path, "exact", #""c""#]).stdout == "Wrote version 7 of key exact.\n",
      "later writes continue above the restored versions")

    let again = directory.path("renumbered.db")
    let renumbered = runInProcess(["import", again, file, "--create", "--renumber"])
    #expect(renumbered.stdout == "Imported 9 versions of 6 keys from \"\(file)\".\n", "\(renumbered)")
    #expect(renumbered.stderr.isEmpty, "--renumber asked for it: no notes")
    let exactAgain = try #require(
      try runInProcess(["history", again, "exact", "--json"]).json() as? [[String: Any]])
    #expect(exactAgain.map { $0["version"] as? Int } == [2, 1])
  }

  @Test func importRefusesATimeItCannotRead() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let file = try directory.write(
      #"{"key":"k","version":1,"writtenAt":"yesterday","value":1}"#, to: "bad.jsonl")
    let result = runInProcess(["import", path, file])
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "Error: Line 1 of \"\(file)\" has a \"writtenAt\" that is not a time like 2026-01-31T12:00:00.000Z.\n"
    )
  }

  @Test(
    arguments: [
      (
        #"{"key":"a","value":1}"# + "\n" + #"{"key":"b","value":}"#,
        "Line 2 of \"FILE\" is not valid JSON: unexpected character \"}\", expected a value at line 1, column 20."
      ),
      (#"{"key":"a","value":1}"# + "\n\n" + #"[1]"#, "Line 3 of \"FILE\" is not a JSON object but an array."),
      (#"{"value":1}"#, "Line 1 of \"FILE\" has no \"key\" string."),
      (#"{"key":"a","value":1}"# + "\n" + #"{"key":"b"}"#, "Line 2 of \"FILE\" has no \"value\"."),
      (#"{"key":"","value":1}"#, "Line 1 of \"FILE\" has an empty \"key\"."),
    ].map { BadImport(content: $0, message: $1) })
  func importRefusesABadLineAndWritesNothing(_ bad: BadImport) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let file = try directory.write(bad.content, to: "bad.jsonl")
    let before = directory.snapshot("app.db")

    let result = runInProcess(["import", path, file])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "Error: " + bad.message.replacingOccurrences(of: "FILE", with: file) + "\n")
    #expect(directory.snapshot("app.db") == before)
  }

  /// Text that is no Unicode — bytes that are not UTF-8, or half of a surrogate pair escaped alone
  /// (`\uD800`), in a key or a value — would be stored as U+FFFD without a word: the line is refused.
  /// A whole pair is a character like any other.
  @Test func importRefusesALineThatIsNotUnicodeText() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    let good = Array((#"{"key":"a","value":1}"# + "\n").utf8)
    let badKey = try directory.write(
      good + Array(#"{"key":"b"#.utf8) + [0xFF, 0xFE] + Array(#"","value":1}"#.utf8), to: "key.jsonl")
    let badValue = try directory.write(
      good + good + Array(#"{"key":"c","value":"x"#.utf8) + [0xC3] + Array(#""}"#.utf8), to: "value.jsonl")
    #expect(
      runInProcess(["import", path, badKey])
        == CommandResult(
          stdout: "",
          stderr: "Error: Line 2 of \"\(badKey)\" is not valid UTF-8 text; nothing was imported.\n", status: 1
        ))
    #expect(
      runInProcess(["import", path, badValue, "--json"])
        == CommandResult(
          stdout: "",
          stderr: "Error: Line 3 of \"\(badValue)\" is not valid UTF-8 text; nothing was imported.\n",
          status: 1))

    let surrogates: [(line: String, escape: String)] = [
      (#"{"key":"a","value":"x\uD800"}"#, #"\uD800"#),
      (#"{"key":"\udc00b","value":1}"#, #"\udc00"#),
      (#"{"key":"a","value":{"n":"\uD83D\uD83D\uDE00"}}"#, #"\uD83D"#),
      (#"{"key":"a","value":["\uDBFF", 1]}"#, #"\uDBFF"#),
      (#"{"key":"a","value":"\uD83D\n"}"#, #"\uD83D"#),
    ]
    for (line, escape) in surrogates {
      let file = try directory.write(
        #"{"key":"ok","value":"\\uD800"}"# + "\n" + line + "\n", to: "lone.jsonl")
      #expect(
        runInProcess(["import", path, file])
          == CommandResult(
            stdout: "",
            stderr: "Error: Line 2 of \"\(file)\" has \(escape) without the other half of its surrogate "
              + "pair, which is no character (it would be stored as U+FFFD).\n", status: 1), "\(line)")
    }
    #expect(directory.snapshot("app.db") == before, "nothing was written")

    let pair = try directory.write(
      #"{"key":"smile\uD83D\uDE00","value":"\ud83d\ude00"}"# + "\n", to: "pair.jsonl")
    #expect(runInProcess(["import", path, pair]).status == 0)
    #expect(runInProcess(["get", path, "smile\u{1F600}"]).stdout == "\"\u{1F600}\"\n")
  }

  /// A time is kept only with its version number: a line with `writtenAt` and no `version` (which export
  /// never writes) is refused rather than imported without its time.
  @Test func importRefusesAWrittenAtWithoutAVersion() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    let file = try directory.write(
      #"{"key":"new","version":1,"writtenAt":"2020-01-01T00:00:00.000Z","value":1}"# + "\n"
        + #"{"key":"new","writtenAt":"2020-01-02T00:00:00.000Z","value":2}"# + "\n", to: "times.jsonl")
    let message =
      "Error: Line 2 of \"\(file)\" has a \"writtenAt\" without a \"version\"; a time is kept only with its "
      + "version, as export writes them: add the \"version\" or remove the \"writtenAt\".\n"
    #expect(runInProcess(["import", path, file]) == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(
      runInProcess(["import", path, file, "--renumber"])
        == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(directory.snapshot("app.db") == before)
  }

  /// A case of ``importRefusesABadLineAndWritesNothing(_:)``. Its content is shown escaped, on one line:
  /// most are several lines, which would break the test runner's output lines.
  struct BadImport: Sendable, CustomTestStringConvertible {
    var content: String
    var message: String
    var testDescription: String { "\(String(reflecting: content)): \(message)" }
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
