import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Keys and values holding quotes, SQL, newlines and terminal escape sequences are shown escaped in
/// human output and stay exact in JSON output.
@Suite(.ownThread) struct HostileKeyTests {
  static let keys = [
    "evil\u{1B}[31mred\u{1B}[0m", "two\nlines", "quote\"and'apostrophe", "'); DROP TABLE pld_values; --",
    "bidi\u{202E}txt.exe", "csi\u{9B}2J", "tab\there", "back\\slash", "日本語キー",
  ]

  private func makeStore(_ directory: TemporaryDirectory) throws -> String {
    try directory.makeStore { store in
      for (index, key) in Self.keys.enumerated() {
        try store.liveData(key, default: "").set("value \(index) \u{1B}]52;c;bad\u{07}")
      }
    }
  }

  /// Whether `text` holds a character a terminal would interpret (other than the newlines of layout).
  private func hasRawControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0 != "\n" && TerminalText.isUnsafe($0) }
  }

  @Test func humanOutputNeverCarriesRawControlCharacters() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try makeStore(directory)

    let keys = runInProcess(["keys", path])
    #expect(keys.status == 0)
    #expect(!hasRawControl(keys.stdout))
    #expect(keys.stdout.split(separator: "\n").count == Self.keys.count + 1)  // one line per key
    #expect(keys.stdout.contains(#""evil\u{1B}[31mred\u{1B}[0m""#))
    #expect(keys.stdout.contains(#""two\nlines""#))
    #expect(keys.stdout.contains(#""quote\"and'apostrophe""#))
    #expect(keys.stdout.contains("\n日本語キー "))

    for key in Self.keys {
      for command in [["get", path, key], ["history", path, key], ["diff", path, key, "1", "1"]] {
        let result = runInProcess(command)
        #expect(result.status == 0, "\(command): \(result)")
        #expect(!hasRawControl(result.stdout + result.stderr), "\(command)")
      }
      let missing = runInProcess(["get", path, key + "\u{1B}[2J"])
      #expect(missing.status == 1)
      #expect(!hasRawControl(missing.stderr))
    }
  }

  @Test func jsonOutputIsValidAndExact() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try makeStore(directory)

    let keys = runInProcess(["keys", path, "--json"])
    #expect(!hasRawControl(keys.stdout))
    let list = try #require(try keys.json() as? [[String: Any]])
    #expect(Swift.Set(list.compactMap { $0["key"] as? String }) == Swift.Set(Self.keys))

    let export = try runInProcess(["export", path]).jsonLines()
    #expect(Swift.Set(export.compactMap { $0["key"] as? String }) == Swift.Set(Self.keys))
    #expect(export.allSatisfy { ($0["value"] as? String)?.hasSuffix("\u{1B}]52;c;bad\u{07}") == true })

    // The keys reach SQLite only as bound parameters: the table is still there.
    // Then one line per key, in byte order, with the key escaped.
    let schemaLines = Self.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map {
      "schema versions of key \(TerminalText.key($0)): 1 (1 version)\n"
    }
    #expect(
      runInProcess(["verify", path]).stdout
        == "ok (\(Self.keys.count) keys, \(Self.keys.count) versions)\n" + schemaLines.joined())
  }
}
