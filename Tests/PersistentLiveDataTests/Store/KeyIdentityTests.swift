import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// Keys are told apart by their UTF-8 bytes: in memory, in the file, in pld-tool and in another process.
/// Swift's `String ==` calls canonically equivalent spellings equal; the store never does.
@Suite(.timeLimit(deadlockTimeLimit)) struct KeyIdentityTests {
  /// Pairs of keys that are canonically equivalent (`==` in Swift) but different bytes.
  static let equivalentPairs: [(String, String)] = [
    ("caf\u{E9}", "cafe\u{301}"),  // NFC and NFD
    ("\u{D55C}\u{AE00}", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{1173}\u{11AF}"),  // Hangul syllables, jamo
    ("a\u{323}\u{307}", "a\u{307}\u{323}"),  // two combining marks, in both orders
    ("\u{1EA1}\u{307}", "a\u{307}\u{323}"),  // a precomposed letter and marks, against the marks alone
  ]

  @Test func theSpellingsAreEqualStringsButDifferentKeys() {
    for (first, second) in Self.equivalentPairs {
      #expect(first == second, "Swift calls \(first.debugDescription) and \(second.debugDescription) equal")
      #expect(!StoreKey.same(first, second))
      #expect(StoreKey(first) != StoreKey(second))
      #expect(Set([StoreKey(first), StoreKey(second)]).count == 2)
    }
  }

  @Test func eachSpellingIsItsOwnLiveValueWithGapFreeVersions() throws {
    let folder = try TemporaryDirectory("keys")
    let path = folder.path("keys.db")
    do {
      let store = try PersistentStore(path: path)
      for (index, (first, second)) in Self.equivalentPairs.enumerated() where index < 3 {
        let a = try store.liveData(first, default: 0)
        let b = try store.liveData(second, default: 0)
        #expect(a !== b, "\(second.debugDescription) is not \(first.debugDescription)'s instance")
        try a.set(1)
        try b.set(10)
        try b.set(11)
        try store.transaction {
          try a.set(2)
          try b.set(12)
        }
        #expect(a.value == 2 && a.version == 2)
        #expect(b.value == 12 && b.version == 3, "the second spelling starts at version 1")
        #expect(try a.history().map(\.version) == [2, 1])
        #expect(try b.history().map(\.version) == [3, 2, 1])
        #expect(try b.history().map(\.value) == [12, 11, 10])
      }
      #expect(try store.keys().count == 6)
      try store.close()
    }
    // A fresh process (here: a fresh store) asking for either spelling first gets its own row.
    for order in [false, true] {
      let store = try PersistentStore(path: path)
      for (index, (first, second)) in Self.equivalentPairs.enumerated() where index < 3 {
        let keys = order ? [second, first] : [first, second]
        let values = try keys.map { try store.liveData($0, default: 0) }
        let expected = order ? [12, 2] : [2, 12]
        #expect(values.map(\.value) == expected, "\(keys.map(\.debugDescription))")
      }
      try store.close()
    }
    // The file agrees: every spelling is a key, and every key's versions are gap-free.
    #expect(try SQLiteCLI.query(path, "SELECT count(DISTINCT key) FROM pld_values") == "6")
    let keys = try toolJSON(["keys", path, "--json"])
    let verify = try toolJSON(["verify", path, "--json"])
    #expect((keys as? [Any])?.count == 6, "\(keys)")
    #expect((verify as? [String: Any])?["keys"] as? Int == 6, "\(verify)")
    #expect((verify as? [String: Any])?["ok"] as? Bool == true, "\(verify)")
  }

  @Test func asyncWritesRemovalAndRetentionKeepTheSpellingsApart() async throws {
    let folder = try TemporaryDirectory("keys")
    let store = try PersistentStore(path: folder.path("keys.db"))
    let (first, second) = Self.equivalentPairs[0]
    let a = try store.liveData(first, default: "", retention: .last(1))
    let b = try store.liveData(second, default: "", retention: .all)
    // Group commit: concurrent writes of both spellings, each its own key.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<8 {
        group.addTask { try await (index.isMultiple(of: 2) ? a : b).write("\(index)") }
      }
      try await group.waitForAll()
    }
    #expect(a.version == 4 && b.version == 4)
    #expect(try a.history().count == 1, "the first spelling keeps its own retention")
    #expect(try b.history().map(\.version) == [4, 3, 2, 1])
    try store.removeKey(first)
    #expect(a.version == 5 && a.value == "", "the removed spelling moved to its default")
    #expect(b.version == 4 && b.value != "", "the other spelling is untouched")
    #expect(try store.keys() == [second])
    try store.close()
  }

  @Test func anotherProcessWritesTheSpellingItNames() async throws {
    let folder = try TemporaryDirectory("keys")
    let path = folder.path("keys.db")
    let store = try PersistentStore(path: path)
    for (first, second) in Self.equivalentPairs.prefix(3) {
      let a = try store.liveData(first, default: 0)
      let b = try store.liveData(second, default: 0)
      try a.set(1)
      // The other process writes the second spelling: its version 1, not the first spelling's 2.
      let written = try toolJSON(["set", path, second, "7", "--json"])
      #expect((written as? [String: Any])?["version"] as? Int == 1, "\(written)")
      #expect(await eventually { b.version == 1 }, "the write of \(second.debugDescription) arrived")
      #expect(b.value == 7 && a.value == 1 && a.version == 1)
      // And the first spelling, seen from there, is its own key too.
      let history = try toolJSON(["history", path, first, "--json"])
      #expect((history as? [Any])?.count == 1, "\(history)")
    }
    try store.close()
  }

  // MARK: pld-tool

  private func tool(_ arguments: [String]) throws -> String {
    let child = try ChildProcess(
      ChildProcess.product("pld-tool"), arguments)
    child.wait()
    let lines = child.readAllLines()
    #expect(child.exitCode == 0, "pld-tool \(arguments): \(lines)")
    return lines.joined(separator: "\n")
  }

  private func toolJSON(_ arguments: [String]) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(try tool(arguments).utf8), options: .fragmentsAllowed)
  }
}
