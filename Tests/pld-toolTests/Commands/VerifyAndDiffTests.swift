import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `verify` finds damaged payloads and version gaps; `diff` shows changes path by path.
@Suite(.ownThread) struct VerifyAndDiffTests {
  @Test func verifyPrintsOkForASoundStore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["verify", path])
    #expect(
      result
        == CommandResult(
          stdout: "ok (3 keys, 9 versions)\nschema versions of key counter: 1 (5 versions)\n"
            + "schema versions of key settings: 1 (3 versions)\nschema versions of key theme: 1 (1 version)\n",
          stderr: "", status: 0))
  }

  @Test func verifyListsInvalidPayloadsAndGapsAndExitsOne() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    try SchemaEditor.execute(
      """
      UPDATE pld_values SET payload = '{"theme":' WHERE key = 'settings' AND version = 2;
      DELETE FROM pld_values WHERE key = 'counter' AND version IN (2, 3);
      """, path: path)

    let result = runInProcess(["verify", path])
    #expect(result.status == 1)
    #expect(
      result.stdout == """
        version gap: key "counter" is missing versions 2 to 3
        invalid JSON: version 2 of key "settings"
        2 problems found in "\(path)".
        schema versions of key counter: 1 (3 versions)
        schema versions of key settings: 1 (3 versions)
        schema versions of key theme: 1 (1 version)

        """)

    let json = runInProcess(["verify", path, "--json"])
    #expect(json.status == 1)
    let report = try #require(try json.json() as? [String: Any])
    #expect(report["ok"] as? Bool == false)
    let problems = try #require(report["problems"] as? [[String: Any]])
    #expect(problems.map { $0["kind"] as? String } == ["versionGap", "invalidJSON"])
    #expect(problems[0]["missingFrom"] as? Int == 2)
    #expect(problems[0]["missingTo"] as? Int == 3)
  }

  @Test func getShowsADamagedPayloadEscapedInsteadOfFailing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    try SchemaEditor.execute(
      "UPDATE pld_values SET payload = 'oops' || char(27) WHERE key = 'theme'", path: path)

    let human = runInProcess(["get", path, "theme"])
    #expect(human.stdout == "(not valid JSON) oops\\u{1B}\n")
    let json = try #require(try runInProcess(["get", path, "theme", "--json"]).json() as? [String: Any])
    #expect(json["value"] is NSNull)
    #expect(json["rawPayload"] as? String == "oops\u{1B}")
    let diff = runInProcess(["diff", path, "theme", "1", "1"])
    #expect(diff.stderr == "Error: Version 1 of key \"theme\" in \"\(path)\" is not valid JSON.\n")
  }

  @Test func diffShowsAddedRemovedAndChangedPaths() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    let result = runInProcess(["diff", path, "settings", "1", "3"])
    #expect(result.status == 0, "\(result)")
    #expect(
      result.stdout == """
        key settings: version 1 → version 3
        ~ $.fontSize: 12 → 14
        ~ $.tags[0]: "a" → "b"
        ~ $.theme: "light" → "dark"
        3 changes

        """)

    let json = runInProcess(["diff", path, "settings", "3", "2", "--json"])
    let changes = try #require(try json.json() as? [[String: Any]])
    #expect(changes.map { $0["path"] as? String } == ["$.fontSize", "$.tags[0]", "$.tags[1]"])
    #expect(changes.map { $0["change"] as? String } == ["changed", "changed", "added"])
    #expect(changes[2]["old"] == nil)
    #expect(changes[2]["new"] as? String == "b")

    #expect(runInProcess(["diff", path, "settings", "2", "2"]).stdout.hasSuffix("no differences\n"))
    let missing = runInProcess(["diff", path, "settings", "1", "9"])
    #expect(
      missing.stderr
        == "Error: Version 9 of key \"settings\" in \"\(path)\" does not exist; the latest is 3.\n")
  }
}
