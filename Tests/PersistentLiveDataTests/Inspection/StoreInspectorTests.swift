import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// `StoreInspector` opens files read-only, refuses what is not a store, and reports what the library
/// wrote.
@Suite struct StoreInspectorTests {
  /// A store with "a" at versions 1…4 and "b" at 1…2, written through the library and closed.
  private func makeStore(_ directory: TemporaryDirectory) throws -> String {
    let path = directory.path("store.db")
    let store = try PersistentStore(path: path)
    let a = try store.liveData("a", default: Profile(name: "", age: 0, tags: []))
    for age in 1...4 { try a.set(Profile(name: "ann", age: age, tags: ["t\(age)"])) }
    let b = try store.liveData("b", default: 0)
    try b.set(10)
    try b.set(20)
    try store.close()
    return path
  }

  @Test func refusesFilesThatAreNotStoresWithoutCreatingOrChangingThem() throws {
    let directory = try TemporaryDirectory("inspector")
    let missing = directory.path("missing.db")
    #expect(throws: InspectionError.missingFile(path: missing)) { try StoreInspector(path: missing) }
    #expect(!fileExists(missing))

    let text = directory.path("notes.txt")
    try writeFile(text, Data("not a database at all, but long enough to have a header......".utf8))
    expectStoreError("notADatabase") { try StoreInspector(path: text) }

    let foreign = directory.path("foreign.db")
    let connection = try SQLiteConnection(path: foreign, mode: .readWrite, create: true)
    try connection.execute("CREATE TABLE contacts(name TEXT)")
    connection.close()
    let foreignBytes = fileBytes(foreign)
    expectStoreError("foreignDatabase") { try StoreInspector(path: foreign) }
    #expect(fileBytes(foreign) == foreignBytes)

    let newer = try makeStore(directory)
    let writer = try SQLiteConnection(path: newer, mode: .readWrite)
    try writer.setPragma("user_version", Int64(Migrator.latestVersion + 1))
    writer.close()
    let error = expectStoreError("schemaTooNew") { try StoreInspector(path: newer) }
    #expect(
      error
        == .schemaTooNew(path: newer, found: Migrator.latestVersion + 1, supported: Migrator.latestVersion))

    let link = directory.path("link.db")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: newer)
    expectStoreError("symbolicLink") { try StoreInspector(path: link) }
  }

  @Test func refusesATruncatedFile() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let checkpoint = try SQLiteConnection(path: path, mode: .readWrite)
    try checkpoint.walCheckpoint(.truncate)
    checkpoint.close()
    let size = fileBytes(path)?.count ?? 0
    try truncateFile(path, to: size - 4096)
    expectStoreError("corrupt") { try StoreInspector(path: path) }
  }

  @Test func acceptsADatabaseWithoutTablesAsAnEmptyStoreAndLeavesItEmpty() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = directory.path("empty.db")
    try writeFile(path, Data())
    let inspector = try StoreInspector(path: path)
    #expect(inspector.schemaVersion == 0)
    #expect(try inspector.keyStatistics().isEmpty)
    #expect(try inspector.latestVersions().isEmpty)
    #expect(try inspector.verify().isOK)
    #expect(throws: InspectionError.unknownKey(path: path, key: "x")) { try inspector.rows(key: "x") }
    inspector.close()
    #expect(fileBytes(path) == Data())
  }

  @Test func reportsWhatTheLibraryWrote() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }

    let summary = try inspector.summary()
    #expect(summary.schemaVersion == Migrator.latestVersion)
    #expect(summary.journalMode == "wal")
    #expect(summary.keyCount == 2)
    #expect(summary.rowCount == 6)
    #expect(summary.isIntegrityOK)
    #expect(summary.accessMode == .readOnly)

    let statistics = try inspector.keyStatistics()
    #expect(statistics.map(\.key) == ["a", "b"])
    #expect(statistics.map(\.currentVersion) == [4, 2])
    #expect(statistics.map(\.versionCount) == [4, 2])
    #expect(statistics[1].payloadSize == 2)
    #expect(statistics[1].totalPayloadSize == 4)
    #expect(try inspector.keyStatistics(for: "b") == statistics[1])
    #expect(try inspector.keys() == ["a", "b"])
    #expect(try inspector.latestVersions() == [StoreKey("a"): 4, StoreKey("b"): 2])

    #expect(try inspector.rows(key: "a").map(\.version) == [4, 3, 2, 1])
    #expect(try inspector.rows(key: "a", limit: 2).map(\.version) == [4, 3])
    #expect(try inspector.rows(key: "a", after: 2).map(\.version) == [3, 4])
    #expect(String(decoding: try inspector.row(key: "b", version: 1).payload, as: UTF8.self) == "10")
    #expect(try inspector.latestRow(key: "b").version == 2)
    #expect(try inspector.rowCount() == 6)
    #expect(try inspector.rowCount(key: "a") == 4)

    var streamed: [String] = []
    try inspector.forEachRow { streamed.append("\($0.key)\($0.version)") }
    #expect(streamed == ["a1", "a2", "a3", "a4", "b1", "b2"])

    // The same history as the library's.
    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let a = try store.liveData("a", default: Profile(name: "", age: 0, tags: []))
    let history = try a.history()
    let rows = try inspector.rows(key: "a")
    #expect(rows.map(\.version) == history.map(\.version))
    #expect(rows.map(\.writtenAt) == history.map(\.writtenAt))
    #expect(try rows.map { try JSONDecoder().decode(Profile.self, from: $0.payload) } == history.map(\.value))
  }

  @Test func namesUnknownKeysAndVersions() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let store = try PersistentStore(path: path)
    _ = try store.prune(key: "a", keep: 2)
    try store.close()
    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }

    #expect(throws: InspectionError.unknownKey(path: path, key: "zz")) {
      try inspector.row(key: "zz", version: 1)
    }
    let pruned = InspectionError.unknownVersion(
      path: path, key: "a", version: 1, oldest: 3, latest: 4, removedAt: nil)
    #expect(throws: pruned) { try inspector.row(key: "a", version: 1) }
    #expect(
      pruned.description == "Version 1 of key \"a\" in \"\(path)\" has been pruned; the oldest kept is 3.")
    let future = InspectionError.unknownVersion(
      path: path, key: "a", version: 9, oldest: 3, latest: 4, removedAt: nil)
    #expect(throws: future) { try inspector.row(key: "a", version: 9) }
    #expect(future.description == "Version 9 of key \"a\" in \"\(path)\" does not exist; the latest is 4.")
    #expect(
      InspectionError.unknownKey(path: "x.db", key: "\u{1B}[2J").description
        == "Key \"\\u{1B}[2J\" is not stored in \"x.db\".")
  }

  @Test func namesTheDeletionForVersionsADeletedKeyLost() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let store = try PersistentStore(path: path)
    try store.removeKey("b")  // versions 1 and 2 go; the deletion takes version 3
    try store.liveData("b", default: 0).set(30)  // version 4
    _ = try store.prune(key: "a", keep: 2)  // a: 1 and 2 pruned, never deleted
    try store.close()
    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }

    #expect(try inspector.removalVersion(of: "b") == 3)
    #expect(try inspector.removalVersion(of: "a") == nil)
    let lostWithTheKey = [
      (2, "was deleted with the key at version 3; the oldest kept is 4."),
      (3, "holds no value: the key was deleted at that version; the oldest kept is 4."),
    ]
    for (version, sentence) in lostWithTheKey {
      let error = InspectionError.unknownVersion(
        path: path, key: "b", version: Int64(version), oldest: 4, latest: 4, removedAt: 3)
      #expect(throws: error) { try inspector.row(key: "b", version: Int64(version)) }
      #expect(error.description == "Version \(version) of key \"b\" in \"\(path)\" \(sentence)")
    }
    // A pruned version of a key never deleted is still called pruned.
    #expect(
      throws: InspectionError.unknownVersion(
        path: path, key: "a", version: 1, oldest: 3, latest: 4, removedAt: nil)
    ) { try inspector.row(key: "a", version: 1) }
  }

  @Test func verifyFindsDamagedPayloadsAndGaps() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let writer = try SQLiteConnection(path: path, mode: .readWrite)
    try writer.execute(
      "UPDATE pld_values SET payload = '[1,' WHERE key = 'b' AND version = 2; DELETE FROM pld_values WHERE key = 'a' AND version = 2"
    )
    writer.close()

    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }
    var progress: [Int] = []
    let report = try inspector.verify { done, _ in progress.append(done) }
    #expect(!report.isOK)
    #expect(report.keyCount == 2)
    #expect(report.rowCount == 5)
    #expect(report.problems == [.versionGap(key: "a", missing: 2...2), .invalidJSON(key: "b", version: 2)])
    #expect(progress.first == 0)
    #expect(progress.last == 5)
  }

  @Test func readsLeaveTheFileUnchangedAndSeeOtherConnectionsCommits() throws {
    let directory = try TemporaryDirectory("inspector")
    let path = try makeStore(directory)
    let store = try PersistentStore(path: path)
    defer { try? store.close() }
    let b = try store.liveData("b", default: 0)
    try b.set(30)
    let before = (fileBytes(path), fileBytes(path + "-wal"))

    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }
    _ = try inspector.summary()
    _ = try inspector.keyStatistics()
    _ = try inspector.verify()
    try inspector.forEachRow { _ in }
    let dataVersion = try inspector.dataVersion()
    #expect(fileBytes(path) == before.0)
    #expect(fileBytes(path + "-wal") == before.1)

    try b.set(40)
    #expect(try inspector.dataVersion() != dataVersion)
    #expect(try inspector.latestVersions()["b"] == 4)
  }
}
