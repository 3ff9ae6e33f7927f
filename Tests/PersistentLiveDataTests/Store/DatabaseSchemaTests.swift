import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// The file is readable by any SQLite client: `pld_values(key, version, written_at, payload)` with the
  /// payload as JSON text (sorted keys), WAL journal mode, and our `application_id`. Read with the sqlite3
  /// command-line client, an independent connection in another process.
  @Suite(.ownThread, .enabled(if: SQLiteCLI.isAvailable, "needs the sqlite3 command-line client"))
  struct DatabaseSchemaTests {
    struct Shape: Codable, Sendable, Equatable {
      struct Size: Codable, Sendable, Equatable {
        var width: Int
        var height: Int
        var depth: Int
      }
      var zulu: String
      var name: String
      var size: Size
      var alpha: Bool
    }

    @Test func payloadIsJSONWithSortedKeys() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let shape = try store.liveData(
        "shape", default: Shape(zulu: "", name: "", size: .init(width: 0, height: 0, depth: 0), alpha: false))
      let written = Shape(zulu: "z", name: "box", size: .init(width: 3, height: 2, depth: 1), alpha: true)
      try shape.set(written)
      try store.close()

      let payload = try SQLiteCLI.query(
        path, "SELECT payload FROM pld_values WHERE key = 'shape' AND version = 1")
      #expect(
        try SQLiteCLI.query(path, "SELECT typeof(payload) FROM pld_values") == "text",
        "JSON as text, not a blob")
      #expect(try SQLiteCLI.query(path, "SELECT json_valid(payload) FROM pld_values") == "1")
      let decoded = try JSONDecoder().decode(Shape.self, from: Data(payload.utf8))
      #expect(decoded == written)
      // Keys appear in sorted order at every level.
      func positions(_ names: [String]) -> [Int] {
        names.map { name in
          payload.range(of: "\"\(name)\"").map {
            payload.distance(from: payload.startIndex, to: $0.lowerBound)
          } ?? -1
        }
      }
      let top = positions(["alpha", "name", "size", "zulu"])
      #expect(!top.contains(-1) && top == top.sorted(), "top-level keys not sorted: \(payload)")
      let nested = positions(["depth", "height", "width"])
      #expect(!nested.contains(-1) && nested == nested.sorted(), "nested keys not sorted: \(payload)")
    }

    @Test func anySQLiteClientCanQueryValuesWithJSONFunctions() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let profile = try store.liveData("profile", default: Profile(name: "", age: 0, tags: []))
      try profile.set(Profile(name: "Ada", age: 36, tags: ["math"]))
      try profile.set(Profile(name: "Ada King", age: 37, tags: ["math", "engines"]))
      let title = try store.liveData("title", default: "")
      try title.set("Notes")
      let count = try store.liveData("count", default: 0)
      try count.set(5)

      // While the store is open: the WAL is readable by another process.
      let rows = try SQLiteCLI.query(
        path,
        "SELECT key, version, json_extract(payload, '$.name') FROM pld_values WHERE key = 'profile' ORDER BY version"
      )
      #expect(rows == "profile|1|Ada\nprofile|2|Ada King")
      #expect(try SQLiteCLI.query(path, "SELECT payload FROM pld_values WHERE key = 'title'") == "\"Notes\"")
      #expect(try SQLiteCLI.query(path, "SELECT payload FROM pld_values WHERE key = 'count'") == "5")
      #expect(
        try SQLiteCLI.query(
          path,
          "SELECT json_extract(payload, '$.tags[1]') FROM pld_values WHERE key = 'profile' AND version = 2")
          == "engines")
    }

    @Test func writtenAtIsMillisecondsSinceTheEpochAndMatchesHistory() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let value = try store.liveData("value", default: 0)
      try value.set(1)
      try value.set(2)
      let history = try value.history()
      try store.close()
      let raw = try SQLiteCLI.query(
        path, "SELECT written_at FROM pld_values WHERE key = 'value' ORDER BY version DESC"
      )
      .split(separator: "\n").compactMap { Int64($0) }
      #expect(raw.count == 2)
      for (entry, milliseconds) in zip(history, raw) {
        let fromFile = Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        #expect(
          abs(fromFile.timeIntervalSince(entry.writtenAt)) < 0.001, "v\(entry.version): \(milliseconds)")
      }
    }

    @Test func fileIsInWALModeAndMarkedAsOurs() throws {
      let folder = try TemporaryDirectory()
      let first = folder.path("first.db")
      let second = folder.path("second.db")
      for path in [first, second] {
        let store = try PersistentStore(path: path)
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      #expect(try SQLiteCLI.query(first, "PRAGMA journal_mode") == "wal")
      let applicationID = try SQLiteCLI.query(first, "PRAGMA application_id")
      #expect(applicationID != "0", "application_id marks the file")
      #expect(
        try SQLiteCLI.query(second, "PRAGMA application_id") == applicationID, "the same mark on every store")
      let schemaVersion = Int(try SQLiteCLI.query(first, "PRAGMA user_version")) ?? 0
      #expect(schemaVersion >= 1, "the schema version is recorded")
      #expect(try SQLiteCLI.query(first, "SELECT count(*) FROM pld_migrations") == "\(schemaVersion)")
      #expect(try SQLiteCLI.query(first, "PRAGMA quick_check") == "ok")
    }

    @Test func walStaysBoundedUnderManyWrites() throws {
      // The store checkpoints in the background when writes pause, and SQLite's automatic checkpoint
      // (every `fallbackAutoCheckpointPages` pages) bounds the WAL when they never pause — unless a
      // reader keeps it from doing so: a store that leaves a statement open lets the WAL grow forever.
      // 3,000 writes of 3 KB are 9 MB of frames at least, more than one fallback period.
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path, options: StoreOptions(durability: .normal))
      let value = try store.liveData("value", default: "")
      let text = String(repeating: "w", count: 3_000)
      for index in 0..<6_000 { try value.set("\(index) \(text)") }
      let walSize = fileBytes(path + "-wal")?.count ?? 0
      let bound = Int(StoreDatabase.fallbackAutoCheckpointPages) * 4_096 * 3 / 2
      #expect(walSize < bound, "WAL is \(walSize / 1_024) KiB after 3,000 writes")
    }
  }
}
