import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

extension Reliability.InjectedFaults {
  /// Keys and values at and past the limits, and rows another SQLite client wrote that the library would
  /// never write: handled with a clear error or a correct round trip, never a crash. (Keys with NUL bytes,
  /// quotes and SQL are covered by Store/KeyTests.)
  @Suite struct HostileInputTests {
    static let limit = StoreKey.maximumLength  // 1 MiB of UTF-8

    static func options() -> StoreOptions {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      return options
    }

    @Test func keysOfExactlyOneMebibyteAreAcceptedAndOneByteMoreIsRefused() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      let ascii = String(repeating: "k", count: Self.limit)
      let twoByte = String(repeating: "é", count: Self.limit / 2)  // U+00E9: 2 bytes of UTF-8 each
      let withNULs =
        String(repeating: "a\u{0}'; DROP TABLE pld_values; --", count: Self.limit / 30)
        + String(repeating: "z", count: Self.limit % 30)
      #expect(ascii.utf8.count == Self.limit && twoByte.utf8.count == Self.limit)
      #expect(withNULs.utf8.count == Self.limit)
      do {
        let store = try PersistentStore(path: path, options: Self.options())
        for (index, key) in [ascii, twoByte, withNULs].enumerated() {
          try store.liveData(key, default: -1).set(index)
        }
        for key in [ascii + "k", twoByte + "k", "é" + twoByte, withNULs + "\u{0}"] {
          #expect(key.utf8.count > Self.limit)
          expectStoreError("invalidKey") { try store.liveData(key, default: 0) }
          expectStoreError("invalidKey") { try store.setJSON(Data("1".utf8), forKey: key) }
        }
        try store.close()
      }
      let store = try PersistentStore(path: path, options: Self.options())
      #expect(Set(try store.keys()) == [ascii, twoByte, withNULs], "only the accepted keys were written")
      for (index, key) in [ascii, twoByte, withNULs].enumerated() {
        let live = try store.liveData(key, default: -1)
        #expect(live.value == index && live.version == 1)
      }
    }

    @Test func valuesOfSixteenMebibytesRoundTrip() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      // Characters JSON must escape, several planes of Unicode, and a NUL, repeated to 16 MiB.
      let unit = "\"quoted\" \\ back\nslash\t \u{0} é 键 🔑 "
      let text = String(repeating: unit, count: (16 << 20) / unit.utf8.count + 1)
      let bytes = Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
      #expect(text.utf8.count >= 16 << 20)
      do {
        let store = try PersistentStore(path: path, options: Self.options())
        try store.liveData("text", default: "").set(text)
        try store.liveData("bytes", default: Data()).set(bytes)
        try store.close()
      }
      let store = try PersistentStore(path: path, options: Self.options())
      let restoredText = try store.liveData("text", default: "")
      #expect(restoredText.value == text)
      #expect(try restoredText.value(at: 1) == text)
      #expect(try store.liveData("bytes", default: Data()).value == bytes)
    }

    /// Another client wrote a payload that is not UTF-8, an empty one, a blob and a NULL-ish one.
    @Test func payloadsThatAreNotJSONTextAreUndecodableNeverACrash() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      try Self.createStore(at: path)
      try Self.insertRaw(
        at: path,
        [
          ("invalid-utf8", 1, "CAST(X'22FF22' AS TEXT)"),  // "\xFF" in quotes
          ("truncated-utf8", 1, "CAST(X'22E282' AS TEXT)"),  // a 3-byte sequence cut after 2
          ("empty", 1, "''"),
          ("blob", 1, "X'00FF00'"),
          ("not-json", 1, "'{\"unterminated'"),
        ])
      let store = try PersistentStore(path: path, options: Self.options())
      for key in ["invalid-utf8", "truncated-utf8", "empty", "blob", "not-json"] {
        let error = expectStoreError("undecodable", "key \(key)") { try store.liveData(key, default: "") }
        if let error { #expect(error.description.contains(key)) }
      }
      var lenient = Self.options()
      lenient.onUndecodable = .useDefault
      try store.close()
      let tolerant = try PersistentStore(path: path, options: lenient)
      let value = try tolerant.liveData("invalid-utf8", default: "fallback")
      #expect(value.value == "fallback" && value.version == 1)
      // history() leaves the undecodable version out; historyEntries() reports it.
      #expect(try value.history().isEmpty)
      expectStoreError("undecodable") { try value.historyEntries().first?.result.get() }
      try value.set("repaired")
      #expect(value.version == 2)
      try tolerant.close()
      #expect(
        try Self.rawHex(
          at: path, "SELECT hex(payload) FROM pld_values WHERE key = 'invalid-utf8' AND version = 1")
          == "22FF22", "the foreign row is left byte for byte")
    }

    /// Keys that are not UTF-8 cannot be named from Swift (a `String` is always valid Unicode): they are
    /// listed with U+FFFD in place of the bad bytes, reading them by that name finds nothing, and their
    /// rows are never touched.
    @Test func keysThatAreNotUTF8AreListedRepairedAndLeftAlone() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      try Self.createStore(at: path)
      try Self.insertRaw(
        at: path,
        [
          ("", 1, "'1'"),
          ("", 2, "'2'"),
        ], keySQL: ["CAST(X'6BFF' AS TEXT)", "CAST(X'6BFE' AS TEXT)"])
      let store = try PersistentStore(path: path, options: Self.options())
      let keys = try store.keys()
      #expect(keys.count == 2 && keys.allSatisfy { $0 == "k\u{FFFD}" }, "\(keys.map(\.debugDescription))")
      let repaired = try store.liveData("k\u{FFFD}", default: 0)
      #expect(repaired.version == 0, "U+FFFD is not the byte 0xFF")
      try repaired.set(3)
      try store.close()
      #expect(
        try Self.rawHex(at: path, "SELECT group_concat(hex(key), ',') FROM pld_values ORDER BY key")
          .split(separator: ",").sorted() == ["6BEFBFBD", "6BFE", "6BFF"])
    }

    /// A version at the top of the range (allowed by the schema): the next `set` is refused, no trap.
    @Test func keyAtTheLargestVersionRefusesTheNextSetWithoutATrap() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      try Self.createStore(at: path)
      try Self.insertRaw(at: path, [("at-max", Int64.max, "'1'")])
      var options = Self.options()
      options.retention = .last(3)
      let store = try PersistentStore(path: path, options: options)
      let atMax = try store.liveData("at-max", default: 0)
      #expect(atMax.version == Int64.max)
      #expect(try atMax.history().map(\.version) == [Int64.max])
      let error = expectStoreError("versionsExhausted") { try atMax.set(2) }
      #expect(error == .versionsExhausted(key: "at-max", path: path))
      if let error { #expect(error.description.contains("no version number left")) }
      #expect(atMax.version == Int64.max && atMax.value == 1)
      expectStoreError("versionsExhausted") { try store.setJSON(Data("2".utf8), forKey: "at-max") }
      #expect(try store.prune(key: nil, keep: 1).deleted == 0)
    }

    /// Versions below 1 violate the schema's CHECK: an open with the full check refuses the file as damaged
    /// (quick_check checks constraints) and leaves it alone; without the check, nothing traps on the
    /// arithmetic.
    @Test func versionsBelowOneAreRefusedAsDamagedAndNeverTrap() throws {
      let folder = try TemporaryDirectory("hostile")
      let path = folder.path("store.db")
      try Self.createStore(at: path)
      try Self.insertRaw(
        at: path, [("at-min", Int64.min, "'1'"), ("negative", -5, "'1'")], ignoringChecks: true)
      let before = fileBytes(path)
      var checked = Self.options()
      checked.verifiesIntegrityOnOpen = true
      expectStoreError("corrupt") { try PersistentStore(path: path, options: checked) }
      #expect(fileBytes(path) == before)

      var options = Self.options()
      options.verifiesIntegrityOnOpen = false
      options.retention = .last(3)
      let store = try PersistentStore(path: path, options: options)
      for key in ["at-min", "negative"] {
        let live = try store.liveData(key, default: 0)
        #expect(live.version < 0, "\(key)")
        _ = try live.history()
        _ = try live.value(at: live.version)
        // The next version would break CHECK (version >= 1): refused, nothing written.
        #expect(throws: PersistentLiveDataError.self, "\(key)") { try live.set(2) }
      }
      #expect(try store.prune(key: nil, keep: 1).deleted == 0, "the newest version of a key is always kept")
      #expect(try store.keys().sorted() == ["at-min", "negative"])
    }

    // MARK: Raw SQL, as another client

    static func createStore(at path: String) throws {
      let store = try PersistentStore(path: path, options: options())
      try store.close()
    }

    /// Inserts rows with raw SQL: `(key, version, payload SQL)`; `keySQL` overrides the keys by SQL.
    static func insertRaw(
      at path: String, _ rows: [(String, Int64, String)], keySQL: [String]? = nil,
      ignoringChecks: Bool = false
    ) throws {
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      defer { connection.close() }
      if ignoringChecks { try connection.execute("PRAGMA ignore_check_constraints = ON") }
      for (index, row) in rows.enumerated() {
        let key = keySQL?[index] ?? "?"
        let statement = try connection.prepare(
          "INSERT INTO pld_values (key, version, written_at, payload) VALUES (\(key), ?, 0, \(row.2))")
        if keySQL == nil {
          try statement.bind(row.0, at: 1)
          try statement.bind(row.1, at: 2)
        } else {
          try statement.bind(row.1, at: 1)
        }
        try statement.run()
      }
    }

    static func rawHex(at path: String, _ sql: String) throws -> String {
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      defer { connection.close() }
      return try connection.scalarText(sql) ?? ""
    }
  }
}
