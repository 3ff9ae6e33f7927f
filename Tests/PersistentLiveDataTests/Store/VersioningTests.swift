import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// Versions per key are 1, 2, 3 … with no gap and never reused: across restarts, rollbacks and pruning.
  @Suite struct VersioningTests {
    @Test func firstSetIsVersionOneAndEachSetAddsOne() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: "d")
      #expect(value.version == 0)
      for (index, text) in ["a", "b", "b", "c"].enumerated() {
        try value.set(text)  // equal values are versions too
        #expect(value.version == Int64(index + 1))
        #expect(value.value == text)
      }
      #expect(try value.history().map(\.version) == [4, 3, 2, 1])
      #expect(try value.history().map(\.value) == ["c", "b", "b", "a"])
    }

    @Test func versionsAreCountedPerKey() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let first = try store.liveData("first", default: 0)
      let second = try store.liveData("second", default: 0)
      try first.set(1)
      try first.set(2)
      try second.set(1)
      try first.set(3)
      #expect(first.version == 3)
      #expect(second.version == 1)
      #expect(try second.history().map(\.version) == [1])
    }

    @Test func versionsAreGapFreeAcrossRestartsAndRollbacks() throws {
      let folder = try TemporaryDirectory()
      do {
        let store = try PersistentStore(path: folder.path("store.db"))
        let value = try store.liveData("value", default: "")
        try value.set("v1")
        try value.set("v2")
        try value.set("v3")
        try store.close()
      }
      do {
        let store = try PersistentStore(path: folder.path("store.db"))
        let value = try store.liveData("value", default: "")
        try value.rollback(to: 1)
        #expect(value.version == 4, "a rollback writes a new version")
        #expect(value.value == "v1")
        try value.set("v5")
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: "")
      #expect(value.version == 5)
      try value.rollback(to: 4)
      #expect(value.version == 6)
      #expect(value.value == "v1")
      let history = try value.history()
      #expect(history.map(\.version) == [6, 5, 4, 3, 2, 1])
      #expect(history.map(\.value) == ["v1", "v5", "v1", "v3", "v2", "v1"])
      // The rolled-back-from versions are untouched: history is never rewritten.
      #expect(try value.value(at: 2) == "v2")
      #expect(try value.value(at: 3) == "v3")

      if SQLiteCLI.isAvailable {
        try store.close()
        let raw = try SQLiteCLI.query(
          folder.path("store.db"),
          "SELECT group_concat(version, ',') FROM (SELECT version FROM pld_values WHERE key = 'value' ORDER BY version)"
        )
        #expect(raw == "1,2,3,4,5,6", "the file holds exactly one row per version")
      }
    }

    @Test func rollbackWritesTheOldContentAsANewVersion() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let profile = try store.liveData("profile", default: Profile(name: "", age: 0, tags: []))
      let original = Profile(name: "Grace", age: 40, tags: ["navy"])
      try profile.set(original)
      try profile.set(Profile(name: "Grace", age: 41, tags: []))
      try profile.rollback(to: 1)
      #expect(profile.value == original)
      #expect(profile.version == 3)
      #expect(try profile.history(limit: 1).first?.value == original)
      #expect(try profile.history(limit: 1).first?.version == 3)
    }

    @Test func rollbackToUnknownVersionThrowsAndChangesNothing() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: 0)
      expectStoreError("unknownVersion", "nothing written yet") { try value.rollback(to: 1) }
      try value.set(10)
      try value.set(20)
      let before = try value.history()
      let bytesBefore = fileBytes(folder.path("store.db"))
      for version: Int64 in [0, -1, 3, 99, .max] {
        let error = expectStoreError("unknownVersion", "version \(version)") {
          try value.rollback(to: version)
        }
        if let error {
          #expect(error.description.contains("value"), "the error names the key: \(error)")
        }
      }
      #expect(value.version == 2)
      #expect(value.value == 20)
      #expect(try value.history().map(\.version) == before.map(\.version))
      #expect(fileBytes(folder.path("store.db")) == bytesBefore)
      try value.set(30)
      #expect(value.version == 3, "a failed rollback consumes no version number")
    }

    @Test func historyIsNewestFirstWithNonIncreasingWriteTimes() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: 0)
      let start = Date()
      for number in 1...20 { try value.set(number) }
      let end = Date()
      let history = try value.history()
      #expect(history.map(\.version) == Array((1...20).reversed()))
      #expect(history.map(\.value) == Array((1...20).reversed()))
      for (newer, older) in zip(history, history.dropFirst()) {
        #expect(newer.writtenAt >= older.writtenAt, "v\(newer.version) written before v\(older.version)")
      }
      // Millisecond precision: allow the rounding on both ends.
      for entry in history {
        #expect(entry.writtenAt >= start.addingTimeInterval(-0.002))
        #expect(entry.writtenAt <= end.addingTimeInterval(0.002))
      }
    }

    @Test func historyLimitReturnsTheNewestVersions() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: "")
      for letter in ["a", "b", "c", "d", "e"] { try value.set(letter) }
      #expect(try value.history(limit: 2).map(\.version) == [5, 4])
      #expect(try value.history(limit: 2).map(\.value) == ["e", "d"])
      #expect(try value.history(limit: 1).map(\.version) == [5])
      #expect(try value.history(limit: 5).count == 5)
      #expect(try value.history(limit: 50).count == 5)
      #expect(try value.history(limit: nil).count == 5)
    }

    @Test func valueAtReturnsStoredVersionsAndNilForOthers() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: "default")
      #expect(try value.value(at: 0) == nil, "version 0 is only the default; nothing was written")
      #expect(try value.value(at: 1) == nil)
      try value.set("one")
      try value.set("two")
      #expect(try value.value(at: 1) == "one")
      #expect(try value.value(at: 2) == "two")
      #expect(try value.value(at: 0) == nil)
      #expect(try value.value(at: 3) == nil)
      #expect(try value.value(at: -5) == nil)
      #expect(try value.value(at: .max) == nil)
    }

    @Test func versionNumbersOfOneKeyAreNotSharedWithAnother() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let first = try store.liveData("first", default: 0)
      let second = try store.liveData("second", default: 0)
      try first.set(1)
      try first.set(2)
      #expect(try second.value(at: 1) == nil)
      expectStoreError("unknownVersion") { try second.rollback(to: 1) }
      #expect(second.version == 0)
    }
  }

  /// `.last(N)` keeps the newest N versions visible, always the latest, and keeps counting.
  @Suite struct RetentionTests {
    @Test func historyNeverShowsMoreThanNAndVersionsKeepCounting() throws {
      let folder = try TemporaryDirectory()
      let options = StoreOptions(retention: .last(3))
      let store = try PersistentStore(path: folder.path("store.db"), options: options)
      let value = try store.liveData("value", default: 0)
      for number in 1...300 {
        try value.set(number)
        let history = try value.history()
        #expect(history.count == min(number, 3), "after \(number) sets")
        if history.count != min(number, 3) { break }
        #expect(history.first?.version == Int64(number))
        #expect(history.first?.value == number, "the latest is always kept")
      }
      #expect(try value.history().map(\.version) == [300, 299, 298])
      #expect(value.version == 300)
    }

    @Test func prunedVersionsAreGoneFromValueAtAndRollback() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(
        path: folder.path("store.db"), options: StoreOptions(retention: .last(2)))
      let value = try store.liveData("value", default: "")
      for number in 1...10 { try value.set("v\(number)") }
      #expect(try value.history().map(\.version) == [10, 9])
      #expect(try value.value(at: 8) == nil)
      #expect(try value.value(at: 1) == nil)
      #expect(try value.value(at: 9) == "v9")
      let before = try value.history()
      expectStoreError("unknownVersion") { try value.rollback(to: 8) }
      expectStoreError("unknownVersion") { try value.rollback(to: 1) }
      #expect(value.version == 10)
      #expect(value.value == "v10")
      #expect(try value.history().map(\.version) == before.map(\.version))
      try value.rollback(to: 9)
      #expect(value.version == 11, "after pruning the next version continues")
      #expect(value.value == "v9")
      #expect(try value.history().map(\.version) == [11, 10])
    }

    @Test func versionsAreNeverReusedAfterPruningAndRestart() throws {
      let folder = try TemporaryDirectory()
      let options = StoreOptions(retention: .last(1))
      do {
        let store = try PersistentStore(path: folder.path("store.db"), options: options)
        let value = try store.liveData("value", default: 0)
        for number in 1...500 { try value.set(number) }
        #expect(try value.history().map(\.version) == [500])
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"), options: options)
      let value = try store.liveData("value", default: 0)
      #expect(value.version == 500)
      #expect(value.value == 500)
      try value.set(501)
      #expect(value.version == 501)
      #expect(try value.history().map(\.version) == [501])

      if SQLiteCLI.isAvailable {
        try store.close()
        // Batched pruning may leave old rows on disk for a while, but never a duplicate or a renumbering.
        let rows = try SQLiteCLI.query(
          folder.path("store.db"),
          "SELECT count(*), count(DISTINCT version), max(version) FROM pld_values WHERE key = 'value'")
        let fields = rows.split(separator: "|").map(String.init)
        #expect(fields.count == 3)
        if fields.count == 3 {
          #expect(fields[0] == fields[1])
          #expect(fields[2] == "501")
          #expect((Int(fields[0]) ?? 0) < 500, "pruning eventually deletes rows (\(fields[0]) kept)")
        }
      }
    }

    @Test func retentionAppliesPerKey() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(
        path: folder.path("store.db"), options: StoreOptions(retention: .last(2)))
      let busy = try store.liveData("busy", default: 0)
      let quiet = try store.liveData("quiet", default: 0)
      try quiet.set(1)
      for number in 1...200 { try busy.set(number) }
      #expect(try quiet.history().map(\.version) == [1], "a quiet key keeps its only version")
      #expect(try busy.history().map(\.version) == [200, 199])
    }

    @Test func retentionOfZeroStillKeepsTheLatest() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(
        path: folder.path("store.db"), options: StoreOptions(retention: .last(0)))
      let value = try store.liveData("value", default: 0)
      for number in 1...40 { try value.set(number) }
      #expect(try value.history().map(\.version) == [40], "never fewer than the latest")
      #expect(try value.value(at: 40) == 40)
    }
  }
}
