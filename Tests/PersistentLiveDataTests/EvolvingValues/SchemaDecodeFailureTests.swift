import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension ValueSchemas {
  /// Versions a type cannot read — undecodable, or written by a newer schema — are reported, never
  /// reset or rewritten, and never hide the versions that do decode.
  @Suite struct SchemaDecodeFailureTests {
    static let key = "note"
    static let v1Default = NoteV1(text: "", tags: "")
    static let v3Default = NoteV3(title: "", tags: [], pinned: false)

    /// Versions 1 and 2 by build 1, version 3 by build 3; returns the path.
    static func mixedStore(_ folder: TemporaryDirectory) throws -> String {
      let path = folder.path("notes.db")
      let store = try PersistentStore(path: path)
      let v1 = try store.liveData(key, default: v1Default)
      try v1.set(NoteV1(text: "a", tags: "x"))
      try v1.set(NoteV1(text: "b", tags: "x, y"))
      try store.close()
      let newer = try PersistentStore(path: path)
      try newer.liveData(key, default: v3Default).set(NoteV3(title: "c", tags: ["z"], pinned: true))
      try newer.close()
      return path
    }

    @Test func anOldBuildReadingANewerRowGetsItsOwnErrorAndWritesNothing() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      let bytes = fileBytes(path)
      let store = try PersistentStore(path: path)
      let error = expectStoreError("valueSchemaTooNew") {
        try store.liveData(Self.key, default: Self.v1Default)
      }
      #expect(error == .valueSchemaTooNew(key: Self.key, version: 3, stored: 3, supported: 1))
      let description = error?.description ?? ""
      for part in ["\"note\"", "Version 3", "schema version 3", "schema version 1", "DecodeFailurePolicy"] {
        #expect(description.contains(part), "\(part) in \(description)")
      }
      try store.close()
      #expect(fileBytes(path) == bytes)
    }

    @Test func anOldBuildUnderUseDefaultStartsFromTheDefaultAtTheNewestVersion() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      let bytes = fileBytes(path)
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
      let note = try store.liveData(Self.key, default: Self.v1Default)
      #expect(note.value == Self.v1Default)
      #expect(note.version == 3)
      try store.close()
      #expect(fileBytes(path) == bytes)
    }

    @Test func anOldBuildUnderLastDecodableStartsFromTheNewestVersionItCanRead() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      let bytes = fileBytes(path)
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
      let note = try store.liveData(Self.key, default: Self.v1Default)
      #expect(note.value == NoteV1(text: "b", tags: "x, y"))
      #expect(note.version == 3)
      try store.close()
      #expect(fileBytes(path) == bytes)
    }

    @Test func historySkipsWhatDoesNotDecodeAndHistoryEntriesListsEveryVersion() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
      let note = try store.liveData(Self.key, default: Self.v1Default)
      #expect(try note.history().map(\.version) == [2, 1], "the newer version is left out, not fatal")
      #expect(try note.history(limit: 2).map(\.version) == [2], "the limit counts stored versions")
      let entries = try note.historyEntries()
      #expect(entries.map(\.version) == [3, 2, 1])
      #expect(entries.map(\.schemaVersion) == [3, 1, 1])
      #expect(entries[0].value == nil)
      #expect(entries[1].value == NoteV1(text: "b", tags: "x, y"))
      #expect(
        entries[0].result.failure == .valueSchemaTooNew(key: Self.key, version: 3, stored: 3, supported: 1))
      #expect(try note.historyEntries(limit: 1).map(\.version) == [3])
      #expect(try note.historyEntry(at: 2)?.value == NoteV1(text: "b", tags: "x, y"))
      #expect(try note.historyEntry(at: 9) == nil)
      #expect(try note.value(at: 1) == NoteV1(text: "a", tags: "x"))
      expectStoreError("valueSchemaTooNew") { try note.value(at: 3) }
      try store.close()
    }

    @Test func rollbackToAVersionThatDoesNotDecodeThrowsAndChangesNothing() throws {
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      // Version 4: a value build 3 cannot read at all.
      let raw = try PersistentStore(path: path)
      _ = try raw.setJSON(Data(#"{"title":7}"#.utf8), forKey: Self.key, schemaVersion: 3)
      try raw.close()
      let bytes = fileBytes(path)
      for policy: DecodeFailurePolicy in [.useDefault, .lastDecodable] {
        let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: policy))
        let old = try store.liveData(Self.key, default: Self.v1Default)
        expectStoreError("valueSchemaTooNew") { try old.rollback(to: 3) }
        #expect(old.version == 4)
        try store.close()
        let current = try PersistentStore(path: path, options: StoreOptions(onUndecodable: policy))
        let note = try current.liveData(Self.key, default: Self.v3Default)
        expectStoreError("undecodable") { try note.rollback(to: 4) }
        #expect(note.version == 4)
        try current.close()
      }
      #expect(fileBytes(path) == bytes, "no failed rollback wrote anything")
    }

    @Test func rollbackToAVersionOfTheCurrentSchemaCopiesItsStoredBytes() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = try Self.mixedStore(folder)
      let store = try PersistentStore(path: path)
      let note = try store.liveData(Self.key, default: Self.v3Default)
      try note.set(NoteV3(title: "d", tags: [], pinned: false))
      try note.rollback(to: 3)
      try store.close()
      let payloads = try SQLiteCLI.query(
        path, "SELECT hex(payload) FROM pld_values WHERE version IN (3, 5) ORDER BY version"
      ).split(separator: "\n")
      #expect(payloads.count == 2 && payloads[0] == payloads[1])
      #expect(try storedSchemaVersions(path, key: Self.key) == [1, 1, 3, 3, 3])
    }

    @Test func anUndecodableVersionNamesItsSchemaVersionTheFailureAndWhatToDo() throws {
      struct Renamed: Codable, Sendable { var title: String }
      let store = try PersistentStore.inMemory()
      _ = try store.setJSON(Data(#"{"text":"x"}"#.utf8), forKey: "renamed")
      let error = expectStoreError("undecodable") {
        try store.liveData("renamed", default: Renamed(title: ""))
      }
      let description = error?.description ?? ""
      for part in [
        "\"renamed\"", "Version 1", #"missing key "title""#, "schema version 1", "bump its schemaVersion",
        "init(from:storedSchemaVersion:)", "DecodeFailurePolicy",
      ] {
        #expect(description.contains(part), "\(part) in \(description)")
      }
    }

    @Test func aFailedUpgradeNamesTheStoredAndTheCurrentSchemaVersion() throws {
      let store = try PersistentStore.inMemory()
      _ = try store.setJSON(Data(#"{"text":"x"}"#.utf8), forKey: "failing")
      let error = expectStoreError("undecodable") {
        try store.liveData("failing", default: FailingUpgradeV2(text: ""))
      }
      guard case .undecodable(let key, let version, let reason) = error else { return }
      #expect(key == "failing")
      #expect(version == 1)
      #expect(reason.contains("stored with schema version 1, upgraded to schema version 2"), "\(reason)")
      #expect(reason.contains("invalid data"), "\(reason)")
    }
  }
}

extension Result {
  /// The error of a failure, or nil.
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
