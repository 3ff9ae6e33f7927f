import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Values nested deeper than the 512 levels `JSONDecoder` reads: `set` and `import` refuse them as the
/// library does, read commands say what a stored one is, and nothing recurses 100,000 levels deep.
@Suite(.ownThread) struct DeepValueCommandTests {
  /// The text of `depth` nested arrays, or objects with one member "a".
  static func deepJSON(_ depth: Int, objects: Bool) -> String {
    objects
      ? String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
      : String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
  }

  static let refusal =
    "Error: The value for key \"tree\" nests arrays and objects deeper than the 512 levels JSONDecoder reads "
    + "back (one is at level 513); nothing was written. Store it flatter: its nodes in an array, each naming "
    + "its parent.\n"

  @Test(arguments: [false, true])
  func setWritesAValueAtTheLimitAndRefusesDeeperOnesWithoutWriting(objects: Bool) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let limit = runInProcess(["set", path, "tree", Self.deepJSON(512, objects: objects)])
    #expect(limit.status == 0, "\(limit)")
    #expect(limit.stdout == "Wrote version 1 of key tree.\n")
    let before = directory.snapshot("app.db")

    for depth in [513, 100_000] {
      let result = runInProcess(["set", path, "tree", Self.deepJSON(depth, objects: objects)])
      #expect(result.status == 1)
      #expect(result.stdout.isEmpty)
      #expect(result.stderr == Self.refusal)
      #expect(directory.snapshot("app.db") == before)
    }

    // The value at the limit reads back, in pld-tool and in the library.
    let get = runInProcess(["get", path, "tree"])
    #expect(get.status == 0)
    #expect(get.stdout.filter { !$0.isWhitespace } == Self.deepJSON(512, objects: objects))
    #expect(runInProcess(["verify", path]).status == 0)
  }

  @Test func importReadsBackAnExportOfValuesAtTheLimit() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let source = try directory.makeSampleStore()
    #expect(runInProcess(["set", source, "arrays", Self.deepJSON(512, objects: false)]).status == 0)
    #expect(runInProcess(["set", source, "objects", Self.deepJSON(512, objects: true)]).status == 0)
    let exported = runInProcess(["export", source])
    #expect(exported.status == 0)
    let file = try directory.write(exported.stdout, to: "backup.jsonl")
    let copy = directory.path("copy.db")

    let result = runInProcess(["import", copy, file, "--create"])
    #expect(result.status == 0, "\(result)")
    #expect(runInProcess(["export", copy]).stdout == exported.stdout)
  }

  @Test(arguments: [false, true])
  func importRefusesAValueDeeperThanTheLimitAndWritesNothing(objects: Bool) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    let prefix = #"{"key":"tree","value":"#
    for depth in [513, 100_000] {
      let file = try directory.write(
        #"{"key":"theme","value":"plain"}"# + "\n" + prefix + Self.deepJSON(depth, objects: objects) + "}\n",
        to: "deep.jsonl")
      let result = runInProcess(["import", path, file])
      #expect(result.status == 1)
      // The line's object is one level; its value may have 512 more.
      let column = prefix.count + (objects ? 5 : 1) * 512 + 1
      #expect(
        result.stderr
          == "Error: Line 2 of \"\(file)\" is not valid JSON: a value nested deeper than 512 levels (the most "
          + "JSONDecoder reads back) at line 1, column \(column).\n")
      #expect(directory.snapshot("app.db") == before)
    }
  }

  @Test func readCommandsReportAStoredRowDeeperThanTheLimit() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    // Written by another program (or by a build before the limit): 100,000 and 513 levels.
    try SchemaEditor.execute(
      """
      UPDATE pld_values SET payload = replace(hex(zeroblob(100000)), '00', '[')
        || replace(hex(zeroblob(100000)), '00', ']') WHERE key = 'theme';
      UPDATE pld_values SET payload = replace(hex(zeroblob(513)), '00', '{"a":') || '1'
        || replace(hex(zeroblob(513)), '00', '}') WHERE key = 'settings' AND version = 2;
      """, path: path)
    let theme =
      "Version 1 of key \"theme\" in \"\(path)\" nests arrays and objects 100000 levels deep, deeper than the "
      + "512 levels JSONDecoder reads back: no application can read it. Write a value over it (pld-tool set, "
      + "or rollback)."
    let settings =
      "Version 2 of key \"settings\" in \"\(path)\" nests arrays and objects 513 levels deep, deeper than the "
      + "512 levels JSONDecoder reads back: no application can read it. Write a value over it (pld-tool set, "
      + "or rollback)."

    #expect(
      runInProcess(["get", path, "theme"])
        == CommandResult(stdout: "", stderr: "Error: \(theme)\n", status: 1))
    #expect(runInProcess(["get", path, "theme", "--json"]).status == 1)
    #expect(runInProcess(["get", path, "settings", "--version", "2"]).stderr == "Error: \(settings)\n")
    #expect(runInProcess(["diff", path, "settings", "1", "2"]).stderr == "Error: \(settings)\n")

    let verify = runInProcess(["verify", path])
    #expect(verify.status == 1)
    #expect(
      verify.stdout.hasPrefix(
        """
        too deep: version 2 of key "settings" is nested 513 levels deep, more than the 512 a value can be read back at
        too deep: version 1 of key "theme" is nested 100000 levels deep, more than the 512 a value can be read back at
        2 problems found in "\(path)".

        """))
    let report = try #require(try runInProcess(["verify", path, "--json"]).json() as? [String: Any])
    let problems = try #require(report["problems"] as? [[String: Any]])
    #expect(problems.map { $0["kind"] as? String } == ["tooDeep", "tooDeep"])
    #expect(problems.map { $0["depth"] as? Int } == [513, 100_000])

    // Every line is exported (a too deep one with its stored text), and the export fails naming them.
    let export = runInProcess(["export", path])
    #expect(export.status == 1)
    let lines = try export.jsonLines()
    #expect(lines.count == 9)
    #expect(lines.filter { $0["rawPayload"] != nil }.map { $0["key"] as? String } == ["settings", "theme"])
    #expect(
      export.stderr
        == "Error: \(settings) \(theme) The exported line holds the stored text as rawPayload, with a null "
        + "value; import refuses it.\n")

    let history = runInProcess(["history", path, "theme"])
    #expect(history.status == 0)
    #expect(
      history.stdout.hasSuffix(
        "\n(not shown: nested 100000 levels deep, deeper than the 512 levels a decoder reads)\n"))
  }
}
