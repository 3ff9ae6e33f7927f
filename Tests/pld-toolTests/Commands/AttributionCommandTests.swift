import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `--author` and `--reason` on the writing commands, and the attribution in what the reading commands
/// print (the AuditTrails article).
@Suite(.ownThread) struct AttributionCommandTests {
  /// What `sqlite3` prints for `sql` on `path` (read-only).
  static func sqlite(_ path: String, _ sql: String) throws -> String {
    // Waited for with waitpid (PLDTestSupport): Process.waitUntilExit once missed a child's end.
    let result = try run("/usr/bin/sqlite3", ["-readonly", path, sql])
    #expect(result.status == 0, "sqlite3 \(sql): \(result.errorOutput)")
    return result.output.trimmingCharacters(in: .newlines)
  }

  @Test func setRollbackAndDeleteRecordTheirAuthorAndReasonAndReadsShowThem() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    var result = runInProcess([
      "set", path, "flags", "1", "--create", "--author", "alice", "--reason", "launch",
    ])
    #expect(result.status == 0, "\(result)")
    result = runInProcess(["set", path, "flags", "2", "--author", "bob"])
    #expect(result.status == 0, "\(result)")
    result = runInProcess(["rollback", path, "flags", "1", "--author", "carol", "--reason", "INC-9 revert"])
    #expect(result.status == 0, "\(result)")

    let history = runInProcess(["history", path, "flags", "--json"])
    let entries = try #require(try history.json() as? [[String: Any]])
    #expect(entries.map { $0["author"] as? String } == ["carol", "bob", "alice"])
    #expect(entries.map { $0["reason"] as? String } == ["INC-9 revert", nil, "launch"])
    // Omitted, not null, when not recorded.
    #expect(entries[1].keys.contains("author") && !entries[1].keys.contains("reason"))

    let human = runInProcess(["history", path, "flags"])
    #expect(human.stdout.contains(#"schema 1 · by carol · "INC-9 revert""#), "\(human)")
    #expect(human.stdout.contains("schema 1 · by bob\n"), "\(human)")

    let get = runInProcess(["get", path, "flags", "--version", "1", "--json"])
    let object = try #require(try get.json() as? [String: Any])
    #expect(object["author"] as? String == "alice" && object["reason"] as? String == "launch")
    let getHuman = runInProcess(["get", path, "flags", "--version", "1"])
    #expect(getHuman.stdout == "1\n")
    #expect(getHuman.stderr == "version 1 · by alice · \"launch\"\n")

    let exported = runInProcess(["export", path])
    #expect(
      exported.stdout.contains(#""schemaVersion":1,"author":"carol","reason":"INC-9 revert","value":1"#))

    result = runInProcess(["delete", path, "flags", "--author", "dave", "--reason", "cleanup"])
    #expect(result.status == 0, "\(result)")
    #expect(try Self.sqlite(path, "SELECT version, author, reason FROM pld_removed_keys") == "4|dave|cleanup")
  }

  @Test func theAuthorDefaultsToTheLoginName() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let login = try #require(AttributionOptions.loginName)
    #expect(runInProcess(["set", path, "key", "1", "--create"]).status == 0)
    let store = try PersistentStore(path: path)
    #expect(
      try store.liveData("key", default: 0).history().first?.attribution == WriteAttribution(author: login))
    try store.close()

    // The binary reads LOGNAME, and prints nothing more for it.
    let run = try ToolProcess.run(
      ["set", path, "key", "2", "--reason", "nightly"], environment: ["LOGNAME": "deploy-bot"])
    #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
    let reopened = try PersistentStore(path: path)
    defer { try? reopened.close() }
    #expect(
      try reopened.liveData("key", default: 0).history().first?.attribution
        == WriteAttribution(author: "deploy-bot", reason: "nightly"))
  }

  @Test func anAuthorOrReasonOverItsLimitInBytesIsRefusedAndNothingIsWritten() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let author256 = String(repeating: "é", count: 128)
    let reason4096 = String(repeating: "é", count: 2_048)
    var result = runInProcess([
      "set", path, "k", "1", "--create", "--author", author256, "--reason", reason4096,
    ])
    #expect(result.status == 0, "\(result)")

    result = runInProcess(["set", path, "k", "2", "--author", "a" + author256])
    #expect(result.status != 0)
    #expect(result.stderr.contains("--author is 257 bytes of UTF-8; the limit is 256 bytes."), "\(result)")
    result = runInProcess(["rollback", path, "k", "1", "--reason", "a" + reason4096])
    #expect(result.status != 0)
    #expect(result.stderr.contains("--reason is 4097 bytes of UTF-8; the limit is 4096 bytes."), "\(result)")
    result = runInProcess(["delete", path, "k", "--author", "a" + author256])
    #expect(result.status != 0)
    #expect(try Self.sqlite(path, "SELECT count(*), max(version) FROM pld_values") == "1|1")
    #expect(try Self.sqlite(path, "SELECT count(*) FROM pld_removed_keys") == "0")

    // An import line over a limit is refused too, naming the line.
    let file = try directory.write(#"{"key":"k","value":3,"author":"a\#(author256)"}"# + "\n", to: "in.jsonl")
    result = runInProcess(["import", path, file])
    #expect(result.status != 0)
    #expect(result.stderr.contains("Line 1"), "\(result)")
    #expect(result.stderr.contains("257 bytes"), "\(result)")
    #expect(try Self.sqlite(path, "SELECT count(*) FROM pld_values") == "1")
  }

  @Test func anExportImportedIntoAnEmptyStoreExportsTheSameBytes() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let source = directory.path("source.db")
    do {
      let store = try PersistentStore(path: source)
      let flags = try store.liveData("flags", default: "")
      try flags.set("none")
      try WriteAttribution.$current.withValue(WriteAttribution(author: "alice", reason: "a \"quoted\"\nline"))
      {
        try flags.set("both")
      }
      try WriteAttribution.$current.withValue(WriteAttribution(author: "zoë")) { try flags.set("author") }
      try WriteAttribution.$current.withValue(WriteAttribution(reason: "why")) { try flags.set("reason") }
      try store.close()
    }
    let exported = runInProcess(["export", source])
    #expect(exported.status == 0)
    let lines = try exported.jsonLines()
    #expect(lines.map { $0["author"] as? String } == [nil, "alice", "zoë", nil])
    #expect(lines.map { $0["reason"] as? String } == [nil, "a \"quoted\"\nline", nil, "why"])
    let file = try directory.write(exported.stdout, to: "backup.jsonl")
    let copy = directory.path("copy.db")

    // --author applies to the versions the import writes anew, never to restored ones.
    let result = runInProcess(["import", copy, file, "--create", "--author", "importer"])
    #expect(result.status == 0, "\(result)")
    #expect(runInProcess(["export", copy]).stdout == exported.stdout)

    // Into a store that has the key, the lines become new versions: each keeps its own attribution, and
    // one without any records the command's.
    let appended = runInProcess(["import", copy, file, "--author", "importer", "--reason", "merge"])
    #expect(appended.status == 0, "\(appended)")
    let store = try PersistentStore(path: copy)
    defer { try? store.close() }
    let history = try store.liveData("flags", default: "").history().reversed().map(\.attribution)
    #expect(
      Array(history.suffix(4)) == [
        WriteAttribution(author: "importer", reason: "merge"),
        WriteAttribution(author: "alice", reason: "a \"quoted\"\nline"), WriteAttribution(author: "zoë"),
        WriteAttribution(reason: "why"),
      ])
  }
}
