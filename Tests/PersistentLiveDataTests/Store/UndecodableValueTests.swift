import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// A stored value that no longer decodes is never silently replaced, deleted or rewritten.
  @Suite struct UndecodableValueTests {
    static let key = "settings/theme"

    /// Writes `values` as Int versions 1… of `key`, then closes the store.
    static func writeInts(_ values: [Int], at path: String, key: String = key) throws {
      let store = try PersistentStore(path: path)
      let live = try store.liveData(key, default: 0)
      for value in values { try live.set(value) }
      try store.close()
    }

    /// The Int history of `key`, read by a fresh store.
    static func intHistory(at path: String, key: String = key) throws -> [Int] {
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      return try store.liveData(key, default: 0).history().map(\.value)
    }

    @Test func throwErrorIsTheDefaultAndNamesKeyAndVersion() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([1, 2, 3], at: path)
      let bytesBefore = fileBytes(path)

      let store = try PersistentStore(path: path)
      let error = expectStoreError("undecodable") { try store.liveData(Self.key, default: "text") }
      if let error {
        #expect(error.description.contains(Self.key), "the error names the key: \(error)")
        #expect(error.description.contains("3"), "the error names the version: \(error)")
        if case .undecodable(let key, let version, _) = error {
          #expect(key == Self.key)
          #expect(version == 3)
        }
      }
      // Nothing was registered or written: the right type still works on the same store.
      let ints = try store.liveData(Self.key, default: 0)
      #expect(ints.value == 3)
      #expect(ints.version == 3)
      try store.close()
      #expect(try Self.intHistory(at: path) == [3, 2, 1])
      #expect(fileBytes(path) == bytesBefore)
    }

    @Test func throwErrorAlsoAppliesToAStructThatLostAField() throws {
      struct Old: Codable, Sendable { var name: String }
      struct New: Codable, Sendable { var name: String; var size: Int }
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("shape", default: Old(name: "")).set(Old(name: "circle"))
        try store.close()
      }
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .throwError))
      let error = expectStoreError("undecodable") {
        try store.liveData("shape", default: New(name: "", size: 0))
      }
      if let error {
        #expect(error.description.contains("shape"))
      }
    }

    @Test func useDefaultStartsFromTheDefaultAndLeavesRowsIntact() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([1, 2, 3], at: path)
      let bytesBefore = fileBytes(path)
      do {
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
        let text = try store.liveData(Self.key, default: "fallback")
        #expect(text.value == "fallback")
        try store.close()
      }
      #expect(fileBytes(path) == bytesBefore, "opening with useDefault rewrites nothing")
      #expect(try Self.intHistory(at: path) == [3, 2, 1], "the original type still reads every version")
    }

    @Test func useDefaultThenSetWritesTheNextVersion() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([1, 2, 3], at: path)
      do {
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
        let text = try store.liveData(Self.key, default: "fallback")
        try text.set("now a string")
        #expect(text.version == 4, "versions 1…3 are kept, so the new value is version 4")
        #expect(text.value == "now a string")
        try store.close()
      }
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
      let ints = try store.liveData(Self.key, default: 0)
      #expect(ints.value == 3, "the old Int versions are still there")
      #expect(try ints.value(at: 1) == 1)
      #expect(try ints.value(at: 2) == 2)
      #expect(try ints.value(at: 3) == 3)
    }

    @Test func lastDecodableFallsBackToTheNewestVersionThatDecodes() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([10, 20], at: path)
      do {
        // Version 3 is a String.
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
        try store.liveData(Self.key, default: "").set("not a number")
        try store.close()
      }
      let bytesBefore = fileBytes(path)
      do {
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
        let ints = try store.liveData(Self.key, default: -1)
        #expect(ints.value == 20)
        try store.close()
      }
      #expect(fileBytes(path) == bytesBefore, "opening with lastDecodable rewrites nothing")

      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
      let ints = try store.liveData(Self.key, default: -1)
      try ints.set(30)
      #expect(ints.version == 4, "version 3 still exists, so the next version is 4")
      try store.close()

      let check = try PersistentStore(path: path)
      let restored = try check.liveData(Self.key, default: 0)
      #expect(restored.value == 30)
      #expect(restored.version == 4)
      #expect(try restored.value(at: 2) == 20)
    }

    @Test func lastDecodableWithNothingDecodableGivesTheDefault() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([1, 2], at: path)
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
      let text = try store.liveData(Self.key, default: "fallback")
      #expect(text.value == "fallback")
      try text.set("string")
      #expect(text.version == 3)
    }

    @Test func undecodableRowIsNeverDeletedOrRewrittenByAnyPolicy() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try Self.writeInts([7], at: path)
      for policy in [DecodeFailurePolicy.throwError, .useDefault, .lastDecodable] {
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: policy))
        _ = try? store.liveData(Self.key, default: [String]())
        try store.close()
      }
      #expect(try Self.intHistory(at: path) == [7])
      if SQLiteCLI.isAvailable {
        #expect(try SQLiteCLI.query(path, "SELECT count(*) || ':' || max(payload) FROM pld_values") == "1:7")
      }
    }
  }
}
