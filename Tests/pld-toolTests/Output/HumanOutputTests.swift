import Foundation
import Testing

@testable import pld_tool

/// Sizes, times, tables and escaping for people.
@Suite struct HumanOutputTests {
  @Test func sizesReadLikeAFileManagers() {
    #expect(HumanFormat.size(0) == "0 B")
    #expect(HumanFormat.size(999) == "999 B")
    #expect(HumanFormat.size(1_234) == "1.2 KB")
    #expect(HumanFormat.size(999_960) == "1.0 MB")
    #expect(HumanFormat.size(3_400_000_000) == "3.4 GB")
  }

  @Test func timesAreISO8601ForScriptsAndRelativeForPeople() {
    #expect(HumanFormat.iso8601(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
    #expect(HumanFormat.iso8601(milliseconds: 1_763_706_090_123) == "2025-11-21T06:21:30.123Z")
    #expect(HumanFormat.iso8601(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    let now = Date(timeIntervalSince1970: 1_000_000)
    #expect(HumanFormat.relative(milliseconds: 1_000_000_000, now: now) == "just now")
    #expect(HumanFormat.relative(milliseconds: 1_000_000_000 - 42_000, now: now) == "42 s ago")
    #expect(HumanFormat.relative(milliseconds: 1_000_000_000 - 300_000, now: now) == "5 min ago")
    #expect(HumanFormat.relative(milliseconds: 1_000_000_000 - 3 * 3_600_000, now: now) == "3 h ago")
    #expect(HumanFormat.relative(milliseconds: 1_000_000_000 - 3 * 86_400_000, now: now) == "3 days ago")
    #expect(HumanFormat.relative(milliseconds: 1_000_060_000, now: now) == "in the future")
  }

  @Test func tablesAlignColumnsByDisplayWidth() {
    var table = Table([.init("KEY"), .init("N", .right)])
    table.append(["日本", "1"])
    table.append(["abcdef", "100"])
    #expect(table.render() == "KEY       N\n日本      1\nabcdef  100\n")
  }

  @Test func keysAreShownPlainOrQuotedAndEscaped() {
    #expect(TerminalText.key("settings.v2/theme") == "settings.v2/theme")
    #expect(TerminalText.key("has space") == #""has space""#)
    #expect(TerminalText.key("a\u{1B}[31m\"b\\") == #""a\u{1B}[31m\"b\\""#)
    #expect(TerminalText.key("") == #""""#)
    #expect(TerminalText.escaped("rtl\u{202E}x\u{9B}") == #"rtl\u{202E}x\u{9B}"#)
    #expect(TerminalText.truncated("abcdefgh", toWidth: 5) == "abcd…")
  }
}
