import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// `WriteAttribution` (the AuditTrails article): every write records the attribution in effect where it is called, and
  /// it comes back through `history`, `historyEntries`, `changes(since:)` and other processes.
  @Suite struct WriteAttributionTests {
    static let ops = WriteAttribution(author: "ops", reason: "INC-42")

    /// `(version, author, reason)` of every kept version of `data`, oldest first, read from the file by
    /// another connection.
    static func stored(_ path: String, key: String) throws -> String {
      try SQLiteCLI.query(
        path,
        "SELECT group_concat(version || ':' || ifnull(author, '-') || ':' || ifnull(reason, '-'), ' ') "
          + "FROM (SELECT * FROM pld_values WHERE key = '\(key)' ORDER BY version)")
    }

    @Test func setRecordsTheAttributionInEffectAndReadsComeBackWithIt() async throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let flags = try store.liveData("flags", default: "on")

      try flags.set("plain")
      try WriteAttribution.$current.withValue(Self.ops) { try flags.set("off") }
      try WriteAttribution.$current.withValue(WriteAttribution(author: "only-author")) { try flags.set("a") }
      try WriteAttribution.$current.withValue(WriteAttribution(reason: "only reason")) { try flags.set("r") }
      try WriteAttribution.$current.withValue(WriteAttribution()) { try flags.set("empty") }

      let expected: [WriteAttribution?] = [
        nil, Self.ops, WriteAttribution(author: "only-author"), WriteAttribution(reason: "only reason"), nil,
      ]
      #expect(try flags.history().reversed().map(\.attribution) == expected)
      #expect(try flags.historyEntries().reversed().map(\.attribution) == expected)
      #expect(try flags.historyEntry(at: 2)?.attribution == Self.ops)
      var seen: [WriteAttribution?] = []
      for try await change in flags.changes(since: 0) {
        seen.append(change.attribution)
        if change.version == 5 { break }
      }
      #expect(seen == expected)
      // The row carries it: any SQLite client reads it.
      #expect(
        try Self.stored(path, key: "flags") == "1:-:- 2:ops:INC-42 3:only-author:- 4:-:only reason 5:-:-")
      try store.close()

      // And a store that opens the file later.
      let reopened = try PersistentStore(path: path)
      defer { try? reopened.close() }
      #expect(
        try reopened.liveData("flags", default: "on").history().reversed().map(\.attribution) == expected)
    }

    @Test func everyKindOfWriteRecordsIt() async throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      func by(_ author: String) -> WriteAttribution {
        WriteAttribution(author: author, reason: "r-\(author)")
      }

      try WriteAttribution.$current.withValue(by("set")) { try count.set(1) }
      try WriteAttribution.$current.withValue(by("update")) { try count.update { $0 += 1 } }
      try WriteAttribution.$current.withValue(by("reset")) { try count.reset() }
      try WriteAttribution.$current.withValue(by("transaction")) {
        try store.transaction { try count.set(10) }
      }
      try await WriteAttribution.$current.withValue(by("write")) { try await count.write(11) }
      try await WriteAttribution.$current.withValue(by("store.write")) {
        try await store.write { try count.update { $0 += 1 } }
      }
      try WriteAttribution.$current.withValue(by("rollback")) { try count.rollback(to: 1) }

      let history = try count.history().reversed()
      #expect(history.map(\.value) == [1, 2, 0, 10, 11, 12, 1])
      #expect(
        history.map(\.attribution)
          == [
            "set", "update", "reset", "transaction", "write", "store.write", "rollback",
          ].map(by))
    }

    @Test func rollbackRecordsTheCurrentAttributionNotTheOldVersions() throws {
      let folder = try TemporaryDirectory("attribution")
      let store = try PersistentStore(path: folder.path("store.db"))
      let theme = try store.liveData("theme", default: "light")
      try WriteAttribution.$current.withValue(WriteAttribution(author: "alice", reason: "dark mode")) {
        try theme.set("dark")
      }
      try theme.set("blue")
      try WriteAttribution.$current.withValue(WriteAttribution(author: "bob", reason: "revert")) {
        try theme.rollback(to: 1)
      }
      // Without an attribution, a rollback records none, not version 1's.
      try theme.rollback(to: 1)
      let history = try theme.history()
      #expect(history.map(\.value) == ["dark", "dark", "blue", "dark"])
      #expect(
        history.map(\.attribution) == [
          nil, WriteAttribution(author: "bob", reason: "revert"), nil,
          WriteAttribution(author: "alice", reason: "dark mode"),
        ])
    }

    @Test func groupCommitRecordsEachOfSixteenCallersOwnAttribution() async throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let values = try (0..<16).map { try store.liveData("caller-\($0)", default: -1) }
      let shared = try store.liveData("shared", default: [Int]())

      // Hold the writer until all sixteen wait, so that they commit in one group.
      let holder = await GroupCommitTests.holdWriter(store, untilWaiting: 16)
      let groupsBefore = store.database.groupCommit.statistics.groups
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<16 {
          group.addTask {
            let mine = WriteAttribution(author: "caller-\(index)", reason: "reason \(index)")
            try await WriteAttribution.$current.withValue(mine) {
              if index.isMultiple(of: 2) {
                try await values[index].write(index)
              } else {
                _ = try await store.write {
                  try values[index].set(index)
                  try shared.update { $0.append(index) }
                }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      try await holder.value
      // One group took them all (the writer's own thread never had an attribution).
      #expect(store.database.groupCommit.statistics.groups - groupsBefore == 1)
      for index in 0..<16 {
        let entry = try #require(try values[index].history().first)
        #expect(entry.value == index)
        #expect(entry.attribution == WriteAttribution(author: "caller-\(index)", reason: "reason \(index)"))
      }
      for entry in try shared.history() {
        let last = try #require(entry.value.last)
        #expect(entry.attribution?.author == "caller-\(last)")
      }
    }

    @Test func nestedWithValueInsideATransactionRecordsTheInnermost() async throws {
      let folder = try TemporaryDirectory("attribution")
      let store = try PersistentStore(path: folder.path("store.db"))
      let log = try store.liveData("log", default: "")
      let outer = WriteAttribution(author: "outer", reason: "batch")
      let inner = WriteAttribution(author: "inner", reason: "one step")

      try WriteAttribution.$current.withValue(outer) {
        try store.transaction {
          try log.set("a")
          try WriteAttribution.$current.withValue(inner) { try log.set("b") }
          try log.set("c")
          try WriteAttribution.$current.withValue(nil) { try log.set("d") }
        }
      }
      // The same inside a group commit's body, which runs on the writer thread.
      try await WriteAttribution.$current.withValue(outer) {
        try await store.write {
          try log.set("e")
          try WriteAttribution.$current.withValue(inner) { try log.set("f") }
        }
      }
      let history = try log.history().reversed()
      #expect(history.map(\.value) == ["a", "b", "c", "d", "e", "f"])
      #expect(history.map(\.attribution) == [outer, inner, outer, nil, outer, inner])
    }

    @Test func limitsAreCountedInBytesAndNothingIsWrittenPastThem() async throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let data = try store.liveData("data", default: 0)

      // "é" is two bytes of UTF-8: 128 of them are 256 bytes (the limit), one more ASCII byte is 257.
      let longestAuthor = String(repeating: "é", count: 128)
      let longestReason = String(repeating: "é", count: 2_048)
      #expect(longestAuthor.utf8.count == 256 && longestReason.utf8.count == 4_096)
      let fits = WriteAttribution(author: longestAuthor, reason: longestReason)
      try WriteAttribution.$current.withValue(fits) { try data.set(1) }
      #expect(try data.history().first?.attribution == fits)

      let tooLongAuthor = WriteAttribution(author: "a" + longestAuthor)
      let tooLongReason = WriteAttribution(author: "ops", reason: "a" + longestReason)
      for (attribution, field, limit, count) in [
        (tooLongAuthor, "author", 256, 257), (tooLongReason, "reason", 4_096, 4_097),
      ] {
        func expectRefused(_ what: String, _ body: () async throws -> Void) async {
          do {
            try await body()
            Issue.record("\(what) with a \(field) of \(count) bytes was not refused")
          } catch let error as WriteAttributionTooLong {
            #expect(error.field.name == field && error.limit == limit && error.byteCount == count)
            #expect("\(error)".contains(field) && "\(error)".contains("\(limit)"))
            #expect(error.localizedDescription == "\(error)")
          } catch {
            Issue.record("\(what): \(error)")
          }
        }
        var transformRan = false
        await WriteAttribution.$current.withValue(attribution) {
          await expectRefused("set") { try data.set(2) }
          await expectRefused("update") { try data.update { _ in transformRan = true } }
          await expectRefused("rollback") { try data.rollback(to: 1) }
          await expectRefused("reset") { try data.reset() }
          await expectRefused("write(_:)") { try await data.write(3) }
          await expectRefused("store.write") { try await store.write { try data.set(4) } }
          await expectRefused("transaction") { try store.transaction { try data.set(5) } }
          await expectRefused("removeKey") { try store.removeKey("data") }
        }
        #expect(!transformRan)
      }
      // Nothing was written: one version, in memory and in the file.
      #expect(data.version == 1 && data.value == 1)
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values") == "1")
      #expect(try SQLiteCLI.query(path, "SELECT count(*) FROM pld_removed_keys") == "0")
    }

    @Test func aFileMigratedFromTheSchemaBeforeReadsItsOldRowsAsNil() throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("old.db")
      // A file as the previous release left it: schema 6, two versions.
      do {
        let connection = try folder.openDatabase("old.db")
        let previous = MigrationCatalog.migrations.filter { $0.version <= 6 }
        _ = try Migrator(migrations: previous).migrate(connection)
        try connection.execute(
          """
          INSERT INTO pld_values (key, version, written_at, payload, schema_version) VALUES
            ('theme', 1, 1700000000000, '"light"', 1), ('theme', 2, 1700000001000, '"dark"', 1);
          """)
        #expect(try connection.pragmaInt("user_version") == 6)
        connection.close()
      }
      let store = try PersistentStore(path: path)
      let theme = try store.liveData("theme", default: "")
      #expect(theme.value == "dark")
      try WriteAttribution.$current.withValue(Self.ops) { try theme.set("blue") }
      try theme.set("green")
      #expect(try theme.history().map(\.attribution) == [nil, Self.ops, nil, nil])
      #expect(try theme.historyEntries().map(\.attribution) == [nil, Self.ops, nil, nil])
      try store.close()
      #expect(try SQLiteCLI.query(path, "PRAGMA user_version") == "\(Migrator.latestVersion)")
      #expect(try Self.stored(path, key: "theme") == "1:-:- 2:-:- 3:ops:INC-42 4:-:-")
    }

    @MainActor
    @Test func versionedObserversReceiveTheAttributionOfEachVersion() async throws {
      let tool = ChildProcess.product("pld-tool")
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try WriteAttribution.$current.withValue(Self.ops) { try store.liveData("flags", default: 0).set(1) }
        try store.close()
      }
      // The version a live value is restored at comes with its attribution too.
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      let flags = try store.liveData("flags", default: 0)
      var seen: [Versioned<Int>] = []
      let observer = flags.observeVersionedForever { seen.append($0) }
      defer { observer.cancel() }
      #expect(seen.map(\.attribution) == [Self.ops])

      let mine = WriteAttribution(author: "main", reason: "own write")
      try WriteAttribution.$current.withValue(mine) { try flags.set(2) }
      try flags.set(3)
      #expect(seen.map(\.version) == [1, 2, 3])
      #expect(seen.map(\.attribution) == [Self.ops, mine, nil])

      let run = try ChildProcess(
        tool, ["set", path, "flags", "4", "--author", "other", "--reason", "process"])
      _ = run.readAllLines()
      run.wait()
      #expect(await eventually { seen.last?.version == 4 })
      #expect(seen.last?.attribution == WriteAttribution(author: "other", reason: "process"))
    }

    @Test func removeKeyRecordsTheAttributionOfTheRemoval() throws {
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let session = try store.liveData("session", default: "")
      try session.set("token")
      try WriteAttribution.$current.withValue(Self.ops) { try store.removeKey("session") }
      try store.close()
      #expect(
        try SQLiteCLI.query(path, "SELECT version || ':' || author || ':' || reason FROM pld_removed_keys")
          == "2:ops:INC-42")
    }

    @MainActor
    @Test func anotherProcessesWriteComesBackWithItsAttribution() async throws {
      let tool = ChildProcess.product("pld-tool")
      try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built with the tests")
      let folder = try TemporaryDirectory("attribution")
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      defer { try? store.close() }
      let flags = try store.liveData("flags", default: "on")
      try flags.set("on")

      let run = try ChildProcess(
        tool, ["set", path, "flags", #""off""#, "--author", "oncall", "--reason", "INC-7 rollback"])
      _ = run.readAllLines()
      run.wait()
      #expect(run.exitCode == 0)
      // The live value of this process moves to it; changes(since:) delivers it with its attribution.
      #expect(await eventually { flags.version == 2 })
      var delivered: Versioned<String>?
      for try await change in flags.changes(since: 1) {
        delivered = change
        break
      }
      #expect(delivered?.value == "off")
      #expect(delivered?.attribution == WriteAttribution(author: "oncall", reason: "INC-7 rollback"))
      #expect(try flags.history().map(\.attribution?.author) == ["oncall", nil])
    }
  }
}
