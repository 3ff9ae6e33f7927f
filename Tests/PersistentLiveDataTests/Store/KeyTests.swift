import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// Any non-empty string is a key, stored byte for byte; one instance per key and store.
  @Suite struct KeyTests {
    static let awkwardKeys = [
      "plain",
      "it's",
      "say \"hi\"",
      "back\\slash",
      "'; DROP TABLE pld_values; --",
      "\"); DELETE FROM pld_values; --",
      "line\nbreak",
      "line\r\nbreak",
      "tab\there",
      "a",
      "a\u{0}b",
      "a\u{0}",
      "\u{0}",
      "ключ",
      "键",
      "🔑🗝️",
      "e\u{301}",  // decomposed é
      " ",
      "%_*?",
      "$.name",
      String(repeating: "k", count: 10_000),
    ]

    @Test func awkwardKeysRoundTripDistinctly() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let keys = Self.awkwardKeys
      do {
        let store = try PersistentStore(path: path)
        for (index, key) in keys.enumerated() {
          let live = try store.liveData(key, default: -1)
          #expect(live.key == key)
          #expect(live.version == 0, "key #\(index) \(key.debugDescription) already had a value")
          try live.set(index)
          try live.set(index * 10)
        }
        #expect(try store.keys().sorted() == keys.sorted(), "keys() lists every key exactly once")
        for (index, key) in keys.enumerated() {
          let live = try store.liveData(key, default: -1)
          #expect(live.value == index * 10, "key #\(index) \(key.debugDescription)")
          #expect(
            try live.history().map(\.value) == [index * 10, index], "key #\(index) \(key.debugDescription)")
        }
        try store.close()
      }
      let store = try PersistentStore(path: path)
      let restoredKeys = try store.keys()
      #expect(restoredKeys.count == keys.count)
      #expect(Set(restoredKeys.map { Array($0.utf8) }) == Set(keys.map { Array($0.utf8) }), "byte for byte")
      for (index, key) in keys.enumerated() {
        let live = try store.liveData(key, default: -1)
        #expect(live.value == index * 10, "key #\(index) \(key.debugDescription) after reopening")
        #expect(live.version == 2, "key #\(index) \(key.debugDescription) after reopening")
      }
      if SQLiteCLI.isAvailable {
        try store.close()
        #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values") == "\(keys.count * 2)")
        #expect(try SQLiteCLI.query(path, "SELECT count(DISTINCT key) FROM pld_values") == "\(keys.count)")
      }
    }

    @Test func keyWithEmbeddedNULIsNotTheKeyCutAtTheNUL() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let short = try store.liveData("a", default: "")
      let long = try store.liveData("a\u{0}b", default: "")
      #expect(short !== long)
      try short.set("short")
      #expect(long.version == 0, "writing \"a\" must not touch \"a\\0b\"")
      try long.set("long")
      #expect(short.version == 1)
      #expect(try short.history().map(\.value) == ["short"])
      #expect(try long.history().map(\.value) == ["long"])
      #expect(try store.keys().sorted() == ["a", "a\u{0}b"])
    }

    @Test func emptyKeyIsRefused() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      expectStoreError("invalidKey") { try store.liveData("", default: 0) }
      #expect(try store.keys().isEmpty)
    }

    @Test func sameKeyAndTypeGiveTheSameInstance() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let first = try store.liveData("theme", default: "light")
      let second = try store.liveData("theme", default: "a different default")
      #expect(first === second)
      try first.set("dark")
      #expect(second.value == "dark")
      #expect(second.version == 1)
    }

    @Test func sameKeyWithAnotherTypeThrowsTypeMismatch() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let theme = try store.liveData("theme", default: "light")
      try theme.set("dark")
      let error = expectStoreError("typeMismatch") { try store.liveData("theme", default: 0) }
      if let error {
        #expect(error.description.contains("theme"), "the error names the key: \(error)")
      }
      expectStoreError("typeMismatch") { try store.liveData("theme", default: String?.none) }
      expectStoreError("typeMismatch") { try store.liveData("theme", default: ["light"]) }
      // The existing instance is unaffected.
      #expect(theme.value == "dark")
      #expect(try store.liveData("theme", default: "light") === theme)
    }

    /// Once the live instance of a key is gone, the key may be asked for with another type; the new
    /// instance's type is the one a third request is checked against.
    @Test func aKeyWhoseInstanceIsGoneMayBeAskedForWithAnotherType() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      weak var gone: PersistentLiveData<Int>?
      do {
        let count = try store.liveData("key", default: 0)
        gone = count
      }
      #expect(gone == nil)
      let text = try store.liveData("key", default: "")
      #expect(try store.liveData("key", default: "other") === text)
      let error = expectStoreError("typeMismatch") { try store.liveData("key", default: 0) }
      if case .typeMismatch(_, let existing, let requested) = error {
        #expect(existing == String(reflecting: String.self), "the live instance's type: \(existing)")
        #expect(requested == String(reflecting: Int.self))
      } else {
        Issue.record("expected a type mismatch, got \(String(describing: error))")
      }
    }

    @Test func sameKeyInAnotherStoreIsAnotherInstance() throws {
      let folder = try TemporaryDirectory()
      let first = try PersistentStore(path: folder.path("first.db"))
      let second = try PersistentStore(path: folder.path("second.db"))
      let one = try first.liveData("key", default: 0)
      let other = try second.liveData("key", default: 0)
      #expect(one !== other)
      try one.set(1)
      #expect(other.version == 0)
    }
  }
}
