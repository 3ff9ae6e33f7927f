import Foundation
import Testing

@testable import pld_tool

/// The tool's JSON parser and printer: strict, exact numbers, terminal-safe strings.
@Suite struct JSONValueTests {
  @Test(arguments: [
    "null", "true", "false", "0", "-0.5e+10", "12345678901234567890", #""a\"b\\c\/\u00e9\ud83d\ude00""#,
    "[]", "{}", #" { "a" : [ 1 , { "b" : null } ] } "#,
  ])
  func acceptsWhatFoundationAccepts(text: String) throws {
    #expect(throws: Never.self) { try JSONParser.parse(text) }
    #expect(throws: Never.self) {
      try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
  }

  @Test(
    arguments: [
      ("", "unexpected end of text, expected a value at line 1, column 1"),
      ("{bad}", "unexpected character \"b\", expected a member name at line 1, column 2"),
      ("[1,]", "unexpected character \"]\", expected a value at line 1, column 4"),
      ("01", "invalid number, leading zero at line 1, column 2"),
      ("\"a\nb\"", "control character U+000A must be escaped in a string at line 1, column 3"),
      ("{\"a\":1}\n x", "unexpected character \"x\" after the JSON value at line 2, column 2"),
      ("\"\\x\"", "invalid escape \"\\x\" in a string at line 1, column 3"),
      ("tru", "unexpected character \"t\", expected a value at line 1, column 1"),
      ("\u{1B}[31m", "unexpected character \"\\u{1B}\", expected a value at line 1, column 1"),
    ].map { InvalidText(text: $0, message: $1) })
  func refusesInvalidTextNamingWhereAndWhy(_ invalid: InvalidText) {
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(invalid.text) }
    do {
      _ = try JSONParser.parse(invalid.text)
    } catch {
      #expect(error.description == invalid.message)
    }
  }

  /// A case of ``refusesInvalidTextNamingWhereAndWhy(_:)``. Its text is shown escaped, on one line: some
  /// hold a newline or an escape sequence, which would break the test runner's output lines.
  struct InvalidText: Sendable, CustomTestStringConvertible {
    var text: String
    var message: String
    var testDescription: String { "\(String(reflecting: text)): \(message)" }
  }

  @Test func refusesNestingDeeperThanTheLimitWithoutCrashing() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
    let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
    #expect(throws: Never.self) { try JSONParser.parse(fine) }
  }

  @Test func keepsNumbersAndMemberOrderExactly() throws {
    let value = try JSONParser.parse(#"{"z":12345678901234567890,"a":0.1,"m":-1E-7}"#)
    #expect(value.compact == #"{"z":12345678901234567890,"a":0.1,"m":-1E-7}"#)
  }

  @Test func printsPrettyJSONWithTwoSpaces() throws {
    let value = try JSONParser.parse(#"{"a":[1,{"b":[]}],"c":{}}"#)
    #expect(value.pretty == "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {}\n}")
  }

  @Test func escapesEveryCharacterATerminalWouldInterpret() throws {
    let value = JSONValue.string("a\u{1B}[2J\u{7F}\u{9B}\u{202E}\u{2028}\u{E0041}é😀\n\"\\")
    #expect(value.compact == #""a\u001b[2J\u007f\u009b\u202e\u2028\udb40\udc41é😀\n\"\\""#)
    let decoded = try JSONSerialization.jsonObject(
      with: Data(value.compact.utf8), options: [.fragmentsAllowed])
    #expect(decoded as? String == "a\u{1B}[2J\u{7F}\u{9B}\u{202E}\u{2028}\u{E0041}é😀\n\"\\")
  }

  @Test func diffNamesPathsWithJSONPathSyntax() throws {
    let old = try JSONParser.parse(#"{"items":[{"title":"a"},{"title":"b"}],"n":1,"gone":true,"odd key":1}"#)
    let new = try JSONParser.parse(
      #"{"items":[{"title":"a"},{"title":"c"},{"title":"x"}],"n":1.0,"odd key":2,"new":null}"#)
    let changes = JSONDiff.changes(from: old, to: new)
    #expect(changes.map(\.path) == [#"$.items[1].title"#, "$.items[2]", "$.gone", #"$["odd key"]"#, "$.new"])
    #expect(changes.map(\.kind) == [.changed, .added, .removed, .changed, .added])
    #expect(changes[2].old == .bool(true))
    #expect(changes[2].new == nil)
    #expect(JSONDiff.changes(from: .number("1"), to: .string("1")).map(\.kind) == [.changed])
    #expect(
      JSONDiff.changes(from: .number("12345678901234567890"), to: .number("12345678901234567891")).count == 1)
    #expect(JSONDiff.changes(from: .array([]), to: .array([])).isEmpty)
  }
}
