import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Build 2 of a label whose build 1 stored a plain string.
private struct LabelV2: PersistentValue, Equatable {
  static let schemaVersion = 2
  var label: String

  init(label: String) { self.label = label }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    label = try decoder.singleValueContainer().decode(String.self)
  }
}

/// Every version's value schema version in `get`, `history`, `export`/`import`, `keys`, `verify`, and
/// what `set` and `rollback` record.
@Suite(.ownThread) struct SchemaVersionCommandTests {
  /// `label`: version 1 by build 1 (a String, schema 1), version 2 by build 2 (schema 2); `plain`: one
  /// Int version.
  static func makeStore(_ directory: TemporaryDirectory, _ name: String = "app.db") throws -> String {
    try directory.makeStore(name) { store in
      try store.liveData("label", default: "").set("first")
      try store.liveData("plain", default: 0).set(1)
    }
    return try directory.makeStore(name) { store in
      try store.liveData("label", default: LabelV2(label: "")).set(LabelV2(label: "second"))
    }
  }

  @Test func getAndHistoryShowEachVersionsSchemaVersion() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)

    let latest = try #require(try runInProcess(["get", path, "label", "--json"]).json() as? [String: Any])
    #expect(latest["schemaVersion"] as? Int == 2)
    let first = try #require(
      try runInProcess(["get", path, "label", "--version", "1", "--json"]).json() as? [String: Any])
    #expect(first["schemaVersion"] as? Int == 1)
    #expect(first["value"] as? String == "first")

    let history = try #require(
      try runInProcess(["history", path, "label", "--json"]).json() as? [[String: Any]])
    #expect(history.map { $0["schemaVersion"] as? Int } == [2, 1])
    let headings = runInProcess(["history", path, "label"]).stdout.split(separator: "\n")
      .filter { $0.hasPrefix("version ") }
    #expect(headings.count == 2)
    #expect(
      headings.first?.hasPrefix("version 2 · ") == true && headings.first?.hasSuffix(" · schema 2") == true)
    #expect(
      headings.last?.hasPrefix("version 1 · ") == true && headings.last?.hasSuffix(" · schema 1") == true)
  }

  @Test func keysShowTheNewestVersionsSchemaVersion() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    let keys = try #require(try runInProcess(["keys", path, "--json"]).json() as? [[String: Any]])
    #expect(keys.map { $0["key"] as? String } == ["label", "plain"])
    #expect(keys.map { $0["schemaVersion"] as? Int } == [2, 1])
    let table = runInProcess(["keys", path]).stdout.split(separator: "\n")
    #expect(table.first?.hasSuffix("SCHEMA  RETENTION") == true, "\(table)")
    #expect(table.dropFirst().first?.split(separator: " ").suffix(2) == ["2", "-"], "\(table)")
  }

  /// Past 20 keys, `verify` counts keys and versions per schema version and lists only the keys that hold
  /// several; `--json` still lists every key.
  @Test func verifySummarizesTheSchemaVersionsOfALargeStore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    _ = try directory.makeStore("app.db") { store in
      for index in 0..<24 { try store.liveData("plain-\(index)", default: 0).set(index) }
    }
    let result = runInProcess(["verify", path])
    #expect(result.status == 0, "\(result)")
    #expect(
      result.stdout == """
        ok (26 keys, 27 versions)
        schema version 1: 26 keys, 26 versions
        schema version 2: 1 key, 1 version
        keys holding several schema versions: 1
        schema versions of key label: 1 (1 version), 2 (1 version)

        """)
    let json = try #require(try runInProcess(["verify", path, "--json"]).json() as? [String: Any])
    #expect((json["schemaVersions"] as? [[String: Any]])?.count == 26)
  }

  @Test func verifyReportsTheSchemaVersionsPresentPerKey() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    let result = runInProcess(["verify", path])
    #expect(result.status == 0, "\(result)")
    #expect(
      result.stdout == """
        ok (2 keys, 3 versions)
        schema versions of key label: 1 (1 version), 2 (1 version)
        schema versions of key plain: 1 (1 version)

        """)
    let json = try #require(try runInProcess(["verify", path, "--json"]).json() as? [String: Any])
    let perKey = try #require(json["schemaVersions"] as? [[String: Any]])
    #expect(perKey.map { $0["key"] as? String } == ["label", "plain"])
    let label = try #require(perKey.first?["schemaVersions"] as? [[String: Any]])
    #expect(label.map { $0["schemaVersion"] as? Int } == [1, 2])
    #expect(label.map { $0["versions"] as? Int } == [1, 1])
  }

  @Test func exportCarriesSchemaVersionsAndImportKeepsThem() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    let exported = runInProcess(["export", path])
    let lines = try exported.jsonLines()
    #expect(lines.map { $0["schemaVersion"] as? Int } == [1, 2, 1])
    let file = try directory.write(exported.stdout, to: "backup.jsonl")
    let copy = directory.path("copy.db")
    #expect(runInProcess(["import", copy, file, "--create"]).status == 0)
    #expect(try runInProcess(["export", copy]).jsonLines().map { $0["schemaVersion"] as? Int } == [1, 2, 1])
    let store = try PersistentStore(path: copy)
    #expect(
      try store.liveData("label", default: LabelV2(label: "")).history().map(\.value.label) == [
        "second", "first",
      ])
    try store.close()

    let bad = try directory.write(#"{"key":"k","value":1,"schemaVersion":0}"# + "\n", to: "bad.jsonl")
    let refused = runInProcess(["import", copy, bad])
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("\"schemaVersion\""), "\(refused)")
  }

  @Test func setRecordsTheKeysCurrentSchemaVersionUnlessGivenAndRollbackCopiesIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    #expect(runInProcess(["set", path, "label", #"{"label":"third"}"#, "--schema-version", "2"]).status == 0)
    #expect(runInProcess(["set", path, "label", #""fourth""#, "--schema-version", "1"]).status == 0)
    #expect(runInProcess(["set", path, "fresh", "1"]).status == 0)
    #expect(runInProcess(["rollback", path, "label", "2"]).status == 0)
    let rows = try runInProcess(["export", path]).jsonLines()
    #expect(
      rows.map { "\($0["key"] ?? "")/\($0["version"] ?? "")/\($0["schemaVersion"] ?? "")" } == [
        "fresh/1/1", "label/1/1", "label/2/2", "label/3/2", "label/4/1", "label/5/2", "plain/1/1",
      ])
    let refused = runInProcess(["set", path, "label", "1", "--schema-version", "0"])
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("--schema-version must be at least 1"), "\(refused)")

    let store = try PersistentStore(path: path)
    let label = try store.liveData("label", default: LabelV2(label: ""))
    #expect(try label.history().map(\.value.label) == ["second", "fourth", "third", "second", "first"])
    try store.close()
  }

  /// A key whose stored versions have different schema versions gives no single shape to assume: `set`
  /// without `--schema-version` writes nothing and says so; with it, it writes.
  @Test func setRequiresASchemaVersionWhenTheKeysVersionsHaveSeveral() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    // Version 3 goes back to schema 1: the current version's is not the newest shape the key had.
    #expect(runInProcess(["rollback", path, "label", "1"]).status == 0)
    let before = directory.snapshot("app.db")

    let refused = runInProcess(["set", path, "label", #"{"label":"x"}"#])
    #expect(
      refused
        == CommandResult(
          stdout: "",
          stderr: "Error: The stored versions of key \"label\" have schema versions 1 and 2 (its current "
            + "version, 3, has 1), so the shape of the JSON is ambiguous: pass --schema-version with its "
            + "schema version. Nothing was written.\n", status: 1))
    #expect(directory.snapshot("app.db") == before)

    let given = runInProcess(["set", path, "label", #""x""#, "--schema-version", "2"])
    #expect(given == CommandResult(stdout: "Wrote version 4 of key label.\n", stderr: "", status: 0))
    let latest = try #require(try runInProcess(["get", path, "label", "--json"]).json() as? [String: Any])
    #expect(latest["schemaVersion"] as? Int == 2)
  }

  @Test func importRefusesALineWithoutSchemaVersionForAKeyWhoseVersionsHaveSeveral() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)  // "label" has versions of schema 1 and 2
    let before = directory.snapshot("app.db")
    let lines = try directory.write(
      #"{"key":"plain","value":2}"# + "\n" + #"{"key":"label","value":"x"}"# + "\n", to: "lines.jsonl")

    let refused = runInProcess(["import", path, lines])
    #expect(refused.status == 1)
    #expect(
      refused.stderr.contains(
        "Line 2 of \"\(lines)\" was not imported: key \"label\" has versions of schema versions 1, 2"),
      "\(refused.stderr)")
    #expect(directory.snapshot("app.db") == before, "nothing was imported")

    // With its schema version the line is imported; a key of one schema version needs none.
    let given = try directory.write(
      #"{"key":"plain","value":2}"# + "\n" + #"{"key":"label","value":"x","schemaVersion":1}"# + "\n",
      to: "given.jsonl")
    #expect(runInProcess(["import", path, given]).status == 0)
    let latest = try #require(try runInProcess(["get", path, "label", "--json"]).json() as? [String: Any])
    #expect(latest["schemaVersion"] as? Int == 1)
  }

  /// Without `--schema-version`, a key whose versions all have one schema version records it (1 for a
  /// new key); when other versions of the store have a higher one, the JSON may have a newer shape than
  /// the one recorded: it is written, with a warning on standard error that names what was recorded and
  /// the option. A store whose versions are all schema 1 gets no warning.
  @Test func setWarnsWhenTheStoreHoldsAHigherSchemaVersionThanTheOneRecorded() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)

    let plain = runInProcess(["set", path, "plain", "2"])
    #expect(plain.status == 0 && plain.stdout == "Wrote version 2 of key plain.\n", "\(plain)")
    #expect(
      plain.stderr
        == "Warning: version 2 of key \"plain\" records schema version 1, that of its current version, while "
        + "other versions in \"\(path)\" have schema versions up to 2. If the JSON has a newer shape, write "
        + "it again with --schema-version.\n", "\(plain.stderr)")
    let fresh = runInProcess(["set", path, "fresh", "1", "--json"])
    #expect(fresh.status == 0)
    #expect((try fresh.json() as? [String: Any])?["schemaVersion"] as? Int == 1)
    #expect(
      fresh.stderr
        == "Warning: version 1 of key \"fresh\" records schema version 1, a new key's, while other versions "
        + "in \"\(path)\" have schema versions up to 2. If the JSON has a newer shape, write it again with "
        + "--schema-version.\n", "\(fresh.stderr)")
    #expect(runInProcess(["set", path, "plain", "3", "--schema-version", "1"]).stderr.isEmpty)
    let versions = try runInProcess(["export", path, "plain"]).jsonLines().map { $0["schemaVersion"] as? Int }
    #expect(versions == [1, 1, 1])

    let plainStore = try directory.makeSampleStore("plain.db")
    #expect(
      runInProcess(["set", plainStore, "counter", "9"])
        == CommandResult(stdout: "Wrote version 6 of key counter.\n", stderr: "", status: 0))
    #expect(runInProcess(["set", plainStore, "new", "1"]).stderr.isEmpty)
  }

  /// A schema version above every stored one (a typo, most often) is written, with a note that says
  /// what it means and that it sticks to the key; one already stored, or the first version of a store,
  /// gets none.
  @Test func setNotesASchemaVersionAboveAnyStoredOne() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try Self.makeStore(directory)
    let typo = runInProcess(["set", path, "label", #"{"label":"x"}"#, "--schema-version", "22"])
    #expect(typo.status == 0 && typo.stdout == "Wrote version 3 of key label.\n", "\(typo)")
    #expect(
      typo.stderr == "Note: no other version in \"\(path)\" has schema version 22 (the highest is 2); an "
        + "application whose type is at an older schema version cannot read this one, and later sets of key "
        + "\"label\" without --schema-version record 22 too.\n", "\(typo.stderr)")
    #expect(runInProcess(["set", path, "plain", "2", "--schema-version", "2"]).stderr.isEmpty)
    let fresh = directory.path("fresh.db")
    #expect(runInProcess(["set", fresh, "a", "1", "--create", "--schema-version", "3"]).stderr.isEmpty)
  }

  @Test func readCommandsShowSchema1ForAFileOfTheReleaseBeforeAndLeaveItUnmigrated() throws {
    let fixture = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/release-schema-1.db").path
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("release.db")
    try FileManager.default.copyItem(atPath: fixture, toPath: path)
    let bytes = FileManager.default.contents(atPath: path)

    let get = try #require(try runInProcess(["get", path, "note", "--json"]).json() as? [String: Any])
    #expect(get["schemaVersion"] as? Int == 1)
    #expect(
      try runInProcess(["export", path]).jsonLines().map { $0["schemaVersion"] as? Int } == [
        1, 1, 1, 1, 1, 1, 1,
      ])
    let keys = try #require(try runInProcess(["keys", path, "--json"]).json() as? [[String: Any]])
    #expect(keys.map { $0["schemaVersion"] as? Int } == [1, 1, 1])
    let verify = runInProcess(["verify", path])
    #expect(verify.status == 0)
    #expect(verify.stdout.contains("schema versions of key note: 1 (3 versions)"), "\(verify)")
    let inspect = try #require(try runInProcess(["inspect", path, "--json"]).json() as? [String: Any])
    #expect(inspect["schemaVersion"] as? Int == 1, "read commands never migrate")
    #expect(FileManager.default.contents(atPath: path) == bytes)
  }
}
