import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// Arrays nested `depth` levels deep, `[[…[]…]]`, made while encoding: the value itself is one number,
/// so making and dropping one 100,000 levels deep takes no recursion (only encoding it would).
struct ArrayNest: Codable, Sendable, Equatable {
  var depth: Int

  init(depth: Int) { self.depth = depth }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    if depth > 1 { try container.encode(ArrayNest(depth: depth - 1)) }
  }

  init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    depth = container.isAtEnd ? 1 : try container.decode(ArrayNest.self).depth + 1
  }
}

/// Objects nested `depth` levels deep, `{"child":{"child":…{}…}}`, made while encoding (as
/// ``ArrayNest``).
struct ObjectNest: Codable, Sendable, Equatable {
  var depth: Int

  init(depth: Int) { self.depth = depth }

  private enum CodingKeys: String, CodingKey { case child }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    if depth > 1 { try container.encode(ObjectNest(depth: depth - 1), forKey: .child) }
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    depth = (try container.decodeIfPresent(ObjectNest.self, forKey: .child)?.depth ?? 0) + 1
  }
}

/// One value whose `encode(to:)` nests `depth` arrays in a loop, without any recursion of its own.
struct LoopNest: Codable, Sendable {
  var depth: Int

  func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for _ in 1..<max(1, depth) { container = container.nestedUnkeyedContainer() }
  }

  init(depth: Int) { self.depth = depth }
  init(from decoder: any Decoder) throws { depth = 0 }
}

/// A deep value beside a `Decimal`: the store's encoder hands a `Decimal` to `JSONEncoder`.
struct PricedNest: Codable, Sendable {
  var price: Decimal
  var nest: ArrayNest
}

extension Persistence {
  /// A value nested deeper than `JSONDecoder` reads is refused when written, whatever its depth, and a
  /// stored one that deep is reported as such when read: never a crash, never a value that cannot be
  /// read back.
  @Suite struct DeepValueTests {
    /// The text of `depth` nested arrays, or objects with one member "a".
    static func deepJSON(_ depth: Int, objects: Bool) -> String {
      objects
        ? String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        : String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test func theLimitIsTheDeepestNestingJSONDecoderReads() throws {
      struct Anything: Decodable {
        init(from decoder: any Decoder) throws {}
      }
      for objects in [false, true] {
        let limit = Data(Self.deepJSON(JSONDepth.limit, objects: objects).utf8)
        let past = Data(Self.deepJSON(JSONDepth.limit + 1, objects: objects).utf8)
        #expect(throws: Never.self) { try JSONDecoder().decode(Anything.self, from: limit) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Anything.self, from: past) }
        #expect(JSONDepth.deepest(in: limit) == JSONDepth.limit)
      }
      #expect(JSONDepth.limit == 512)
      #expect(JSONDepth.deepest(in: Array(#"["[[[", {"a": [1, {}]}, "\"{"]"#.utf8)) == 4)
    }

    @Test(arguments: [false, true])
    func aValueAtTheLimitReadsBackAndOnePastItIsRefusedWithoutWriting(objects: Bool) throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let key = "tree"
      do {
        let store = try PersistentStore(path: path)
        if objects {
          let live = try store.liveData(key, default: ObjectNest(depth: 1))
          try live.set(ObjectNest(depth: JSONDepth.limit))
          let error = expectStoreError("valueTooDeep") {
            try live.set(ObjectNest(depth: JSONDepth.limit + 1))
          }
          #expect(error == .valueTooDeep(key: key, depth: JSONDepth.limit + 1))
          #expect(error?.description.contains("\"tree\"") == true, "\(String(describing: error))")
          #expect(error?.description.contains("513") == true, "\(String(describing: error))")
          #expect(live.version == 1)
          #expect(live.value == ObjectNest(depth: JSONDepth.limit))
        } else {
          let live = try store.liveData(key, default: ArrayNest(depth: 1))
          try live.set(ArrayNest(depth: JSONDepth.limit))
          let error = expectStoreError("valueTooDeep") { try live.set(ArrayNest(depth: JSONDepth.limit + 1)) }
          #expect(error == .valueTooDeep(key: key, depth: JSONDepth.limit + 1))
          #expect(live.version == 1)
        }
        try store.close()
      }
      // After a restart the value at the limit reads back; nothing of the refused one was written.
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      if objects {
        let live = try store.liveData(key, default: ObjectNest(depth: 1))
        #expect(live.value == ObjectNest(depth: JSONDepth.limit))
        #expect(try live.history().map(\.version) == [1])
      } else {
        let live = try store.liveData(key, default: ArrayNest(depth: 1))
        #expect(live.value == ArrayNest(depth: JSONDepth.limit))
        #expect(try live.history().map(\.version) == [1])
      }
    }

    @Test func aValueAHundredThousandLevelsDeepIsRefusedBySetAndWrite() async throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let arrays = try store.liveData("arrays", default: ArrayNest(depth: 1))
      let objects = try store.liveData("objects", default: ObjectNest(depth: 1))
      let loop = try store.liveData("loop", default: LoopNest(depth: 1))
      let priced = try store.liveData("priced", default: PricedNest(price: 1, nest: ArrayNest(depth: 1)))
      let deep = 100_000
      let tooDeep = JSONDepth.limit + 1

      #expect(throws: PersistentLiveDataError.valueTooDeep(key: "arrays", depth: tooDeep)) {
        try arrays.set(ArrayNest(depth: deep))
      }
      #expect(throws: PersistentLiveDataError.valueTooDeep(key: "objects", depth: tooDeep)) {
        try objects.set(ObjectNest(depth: deep))
      }
      // Containers nested in a loop, not by recursion: no chain of 100,000 nodes is built either.
      #expect(throws: PersistentLiveDataError.valueTooDeep(key: "loop", depth: tooDeep)) {
        try loop.set(LoopNest(depth: deep))
      }
      // A value JSONEncoder would otherwise write (for its Decimal) is refused before it gets there.
      #expect(throws: PersistentLiveDataError.valueTooDeep(key: "priced", depth: tooDeep)) {
        try priced.set(PricedNest(price: 1.5, nest: ArrayNest(depth: deep)))
      }
      #expect(throws: PersistentLiveDataError.valueTooDeep(key: "arrays", depth: tooDeep)) {
        try arrays.update { $0 = ArrayNest(depth: deep) }
      }
      await #expect(throws: PersistentLiveDataError.valueTooDeep(key: "arrays", depth: tooDeep)) {
        try await arrays.write(ArrayNest(depth: deep))
      }
      await #expect(throws: PersistentLiveDataError.valueTooDeep(key: "objects", depth: tooDeep)) {
        try await objects.write(ObjectNest(depth: deep))
      }
      await #expect(throws: PersistentLiveDataError.valueTooDeep(key: "objects", depth: tooDeep)) {
        try await store.write { try objects.set(ObjectNest(depth: deep)) }
      }
      // Nothing was written, and the store goes on.
      #expect([arrays.version, objects.version, loop.version, priced.version] == [0, 0, 0, 0])
      try await arrays.write(ArrayNest(depth: 3))
      #expect(arrays.version == 1)
      #expect(try store.keys() == ["arrays"])
      try store.close()
    }

    @Test func rawJSONDeeperThanTheLimitIsRefusedWithItsDepth() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      defer { try? store.close() }
      for objects in [false, true] {
        let limit = Data(Self.deepJSON(JSONDepth.limit, objects: objects).utf8)
        #expect(try store.setJSON(limit, forKey: "raw") >= 1)
        for depth in [JSONDepth.limit + 1, 100_000] {
          let text = Data(Self.deepJSON(depth, objects: objects).utf8)
          #expect(throws: PersistentLiveDataError.valueTooDeep(key: "raw", depth: depth)) {
            try store.setJSON(text, forKey: "raw")
          }
        }
      }
      #expect(try store.headVersion(of: "raw") == 2)
    }

    @Test func aStoredRowAHundredThousandLevelsDeepReadsAsAClearError() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let arrays = try store.liveData("arrays", default: ArrayNest(depth: 1))
        for depth in 2...4 { try arrays.set(ArrayNest(depth: depth)) }
        try store.liveData("objects", default: ObjectNest(depth: 1)).set(ObjectNest(depth: 2))
        try store.close()
      }
      // Another program (or a build before the limit) wrote rows 100,000 levels deep.
      let connection = try SQLiteConnection(path: path, mode: .readWrite, create: false)
      try connection.execute(
        """
        UPDATE pld_values SET payload = replace(hex(zeroblob(100000)), '00', '[')
          || replace(hex(zeroblob(100000)), '00', ']') WHERE key = 'arrays' AND version = 2;
        UPDATE pld_values SET payload = replace(hex(zeroblob(100000)), '00', '{"a":') || '1'
          || replace(hex(zeroblob(100000)), '00', '}') WHERE key = 'objects';
        """)
      connection.close()

      func expectDeep(_ error: PersistentLiveDataError?, version: Int64) {
        guard case .undecodable(_, let errorVersion, let reason)? = error else {
          Issue.record("expected undecodable, got \(String(describing: error))")
          return
        }
        #expect(errorVersion == version)
        #expect(reason.contains("nested 100000 levels deep"), "\(reason)")
        #expect(reason.contains("512"), "\(reason)")
      }

      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      expectDeep(
        expectStoreError("undecodable") { try store.liveData("objects", default: ObjectNest(depth: 1)) },
        version: 1)
      let arrays = try store.liveData("arrays", default: ArrayNest(depth: 1))
      #expect(arrays.value == ArrayNest(depth: 4))
      // history() throws at what does not decode (the default policy); historyEntries() lists it with why.
      expectDeep(expectStoreError("undecodable") { try arrays.history() }, version: 2)
      #expect(try arrays.history(limit: 1).map(\.version) == [3])
      expectDeep(expectStoreError("undecodable") { try arrays.value(at: 2) }, version: 2)
      let entries = try arrays.historyEntries()
      #expect(entries.map(\.version) == [3, 2, 1])
      if case .failure(let error) = entries[1].result {
        expectDeep(error, version: 2)
      } else {
        Issue.record("version 2 decoded")
      }

      let inspector = try StoreInspector(path: path)
      defer { inspector.close() }
      let report = try inspector.verify()
      #expect(
        report.problems == [
          .tooDeep(key: "arrays", version: 2, depth: 100_000),
          .tooDeep(key: "objects", version: 1, depth: 100_000),
        ])
    }

    @Test func verifyReportsARowOneLevelPastTheLimit() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let live = try store.liveData("tree", default: ArrayNest(depth: 1))
        try live.set(ArrayNest(depth: JSONDepth.limit))
        try live.set(ArrayNest(depth: 2))
        try store.close()
      }
      let connection = try SQLiteConnection(path: path, mode: .readWrite, create: false)
      try connection.execute(
        "UPDATE pld_values SET payload = '[' || payload || ']' WHERE key = 'tree' AND version = 1")
      connection.close()
      let inspector = try StoreInspector(path: path)
      defer { inspector.close() }
      let report = try inspector.verify()
      #expect(report.problems == [.tooDeep(key: "tree", version: 1, depth: JSONDepth.limit + 1)])
      #expect(
        report.problems.first?.description
          == "too deep: version 1 of key \"tree\" is nested 513 levels deep, more than the 512 a value can be "
          + "read back at")
    }

    @Test func theErrorsDocumentationExampleIsRefused() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      defer { try? store.close() }
      var printed: [String] = []
      func print(_ line: String) { printed.append(line) }
      // PersistentLiveDataError.valueTooDeep's example:
      indirect enum Chain: Codable, Sendable { case end, link(Chain) }  // {"link":{"_0":{"link":…}}}

      var chain = Chain.end
      for _ in 0..<600 { chain = .link(chain) }  // 1,200 levels
      do {
        try store.liveData("chain", default: Chain.end).set(chain)
      } catch PersistentLiveDataError.valueTooDeep(let key, let depth) {
        print("\(key): an array or object at level \(depth); nothing was written")
      }
      #expect(printed == ["chain: an array or object at level 513; nothing was written"])
      #expect(
        PersistentLiveDataError.valueTooDeep(key: "chain", depth: 513).localizedDescription
          == "The value for key \"chain\" nests arrays and objects deeper than the 512 levels JSONDecoder "
          + "reads back (one is at level 513); nothing was written. Store it flatter: its nodes in an array, "
          + "each naming its parent.")
    }
  }
}
