import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension ValueSchemas {
  /// A store written by build 1 of a type, reopened by build 2 (adds a field) and build 3 (renames one,
  /// changes another's type): every version reads as the newest build, and no stored row changes.
  @Suite struct SchemaEvolutionTests {
    static let key = "note"
    static let v1Values = [
      NoteV1(text: "groceries", tags: "home"),
      NoteV1(text: "groceries", tags: "home, errands"),
      NoteV1(text: "shopping", tags: "home, errands"),
    ]

    /// Versions 1…3 written by build 1, then closed; returns the path.
    static func writeByV1(_ folder: TemporaryDirectory) throws -> String {
      let path = folder.path("notes.db")
      let store = try PersistentStore(path: path)
      let note = try store.liveData(key, default: NoteV1(text: "", tags: ""))
      for value in v1Values { try note.set(value) }
      try store.close()
      return path
    }

    @Test func aStoreWrittenByV1ReadsAsV3AfterV2AndRollbackWritesSchema3() async throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = try Self.writeByV1(folder)
      let v1Rows = try rawRows(path)
      #expect(try storedSchemaVersions(path, key: Self.key) == [1, 1, 1])

      // Build 2: restores version 3 upgraded, and writes version 4 as schema 2.
      do {
        let store = try PersistentStore(path: path)
        let note = try store.liveData(Self.key, default: NoteV2(text: "", tags: "", pinned: false))
        #expect(note.version == 3)
        #expect(note.value == NoteV2(text: "shopping", tags: "home, errands", pinned: false))
        try note.update { $0.pinned = true }
        try store.close()
      }
      #expect(try storedSchemaVersions(path, key: Self.key) == [1, 1, 1, 2])
      let rowsBeforeV3 = try rawRows(path)
      #expect(Array(rowsBeforeV3.prefix(3)) == v1Rows, "build 2 rewrote no row of build 1")
      let bytesBeforeV3 = fileBytes(path)

      // Build 3: every read path upgrades; none writes.
      let expected: [NoteV3] = [
        NoteV3(title: "groceries", tags: ["home"], pinned: false),
        NoteV3(title: "groceries", tags: ["home", "errands"], pinned: false),
        NoteV3(title: "shopping", tags: ["home", "errands"], pinned: false),
        NoteV3(title: "shopping", tags: ["home", "errands"], pinned: true),
      ]
      do {
        let store = try PersistentStore(path: path)
        let note = try store.liveData(Self.key, default: NoteV3(title: "", tags: [], pinned: false))
        #expect(note.version == 4)
        #expect(note.value == expected[3], "restore upgrades schema 2")
        #expect(try note.history().map(\.value) == expected.reversed())
        #expect(try note.historyEntries().map(\.schemaVersion) == [2, 1, 1, 1])
        for (offset, value) in expected.enumerated() {
          #expect(try note.value(at: Int64(offset + 1)) == value)
        }
        var changes: [NoteV3] = []
        for try await change in note.changes(since: 0) {
          changes.append(change.value)
          if change.version == 4 { break }
        }
        #expect(changes == expected)
        try store.close()
      }
      #expect(fileBytes(path) == bytesBeforeV3, "reading older versions rewrote nothing")

      // Rollback to a version of build 1 writes its upgraded content, as schema 3.
      do {
        let store = try PersistentStore(path: path)
        let note = try store.liveData(Self.key, default: NoteV3(title: "", tags: [], pinned: false))
        try note.rollback(to: 2)
        #expect(note.version == 5)
        #expect(note.value == expected[1])
        try store.close()
      }
      #expect(try storedSchemaVersions(path, key: Self.key) == [1, 1, 1, 2, 3])
      let rowsAfter = try rawRows(path)
      #expect(Array(rowsAfter.prefix(4)) == rowsBeforeV3, "the stored rows are byte-identical")
      let payload = try SQLiteCLI.query(path, "SELECT payload FROM pld_values WHERE version = 5")
      #expect(payload == #"{"pinned":false,"tags":["home","errands"],"title":"groceries"}"#)
      let reread = try PersistentStore(path: path)
      #expect(
        try reread.liveData(Self.key, default: NoteV3(title: "", tags: [], pinned: false)).value
          == expected[1])
      try reread.close()
    }

    @Test func everyVersionRecordsTheSchemaVersionOfItsType() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      try store.liveData("plain", default: 0).set(1)
      try store.liveData("v1", default: NoteV1(text: "", tags: "")).set(NoteV1(text: "a", tags: ""))
      try store.liveData("v3", default: NoteV3(title: "", tags: [], pinned: false)).set(
        NoteV3(title: "a", tags: [], pinned: false))
      try store.close()
      #expect(try storedSchemaVersions(path, key: "plain") == [1])
      #expect(try storedSchemaVersions(path, key: "v1") == [1])
      #expect(try storedSchemaVersions(path, key: "v3") == [3])
    }

    @Test func aRowOfTheCurrentSchemaIsNeverUpgraded() throws {
      _ = UpgradeCounter.shared.take()
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let file = try PersistentStore(path: path)
        try file.liveData("counter", default: 0).set(7)
        try file.close()
      }
      do {
        let file = try PersistentStore(path: path)
        let counted = try file.liveData("counter", default: CountedV2(count: 0))
        #expect(counted.value == CountedV2(count: 7))
        #expect(UpgradeCounter.shared.take() == [1], "the schema-1 row is upgraded once")
        try counted.set(CountedV2(count: 8))
        #expect(try counted.history().map(\.value.count) == [8, 7])
        #expect(UpgradeCounter.shared.take() == [1], "only the schema-1 row goes through the upgrade")
        try file.close()
      }
    }
  }
}
