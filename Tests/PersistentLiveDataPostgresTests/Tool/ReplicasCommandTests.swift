import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataPostgres

/// `pld-tool replicas --postgres URL`, run as a process against a real server: the replicas running on
/// the database, the migrations that strand any of them (exit status 1), and nothing migrated.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct ReplicasCommandTests {
  static func run(_ arguments: [String]) async throws -> (lines: [String], status: Int32?) {
    let tool = ChildProcess.product("pld-tool")
    try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built: \(tool)")
    let child = try ChildProcess(tool, arguments, mergingStandardError: true)
    let (lines, _) = await child.finish(within: .seconds(60))
    return (lines, child.exitCode)
  }

  @Test func itListsTheRunningReplicasAndWarnsOfOneAMigrationStrands() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: SharedReplicasTests.fast)
    #expect(await eventually { ((try? await a.store.replicas()) ?? []).count == 1 })
    var (lines, status) = try await Self.run(["replicas", "--postgres", fixture.url])
    #expect(status == 0, "\(lines)")
    let table = lines.joined(separator: "\n")
    #expect(table.contains("REPLICA") && table.contains(LibraryVersion.current), "\(table)")
    #expect(
      table.contains("\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"))
    #expect(table.contains("read-write"), "\(table)")

    // An older release's replica, and a newer release's migration marked read-only.
    try await SharedReplicasTests.recordReplica(fixture, id: "older", schema: SharedSchema.current - 1)
    try await SharedMigrationCompatibilityTests.migrateAsANewerRelease(fixture, mark: .readOnly)
    (lines, status) = try await Self.run(["replicas", "--postgres", fixture.url, "--json"])
    #expect(status == 1, "\(lines)")
    let output = lines.joined(separator: "\n")
    let json = String(output[..<(output.range(of: "\n]")?.upperBound ?? output.endIndex)])
    let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    #expect(listed.count == 2, "\(listed)")
    let older = try #require(listed.first { $0["id"] as? String == "older" })
    #expect(older["library"] as? String == "0.3.0")
    #expect(older["strandedBy"] as? [String] == ["\(SharedMigrationCompatibilityTests.next) (read-only)"])
    #expect(output.contains("2 replicas stranded"), "\(output)")
    #expect(output.contains("elsewhere:7 (0.3.0) by \(SharedMigrationCompatibilityTests.next)"), "\(output)")
    await a.shutDown()
  }

  /// What a row says is data: a host name holding a terminal escape is printed escaped, in the table and
  /// in the warning.
  @Test func aHostileRowIsPrintedEscaped() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica(options: SharedReplicasTests.fast)
    #expect(await eventually { ((try? await a.store.replicas()) ?? []).count == 1 })
    await a.shutDown()
    try await fixture.psql(
      """
      INSERT INTO pld_replicas (id, host, pid, library_version, schema_version, access)
      VALUES ('hostile', E'evil\\x1b[2Jhost', 7, '0.3.0', 0, 'read-write')
      """)
    let (lines, status) = try await Self.run(["replicas", "--postgres", fixture.url])
    #expect(status == 1, "\(lines)")
    let output = lines.joined(separator: "\n")
    #expect(!output.contains("\u{1b}"), "\(output)")
    let escaped = #"evil\u{1B}[2Jhost:7"#
    #expect(output.components(separatedBy: escaped).count == 3, "in the table and the warning: \(output)")
  }

  /// Looking never migrates: a database of the first release stays at schema 1, with no replica listed.
  @Test func itMigratesNothing() async throws {
    let fixture = try await SharedFixture()
    try await SharedIndexBuildTests.releaseOneDatabase(fixture, rows: 10)
    let (lines, status) = try await Self.run(["replicas", "--postgres", fixture.url])
    #expect(status == 0, "\(lines)")
    #expect(lines.joined().contains("No replica"), "\(lines)")
    #expect(try await fixture.psql("SELECT max(version) FROM pld_schema") == "1")
  }

  @Test func aServerThatCannotBeReachedIsSaidWithoutThePassword() async throws {
    let (lines, status) = try await Self.run(
      ["replicas", "--postgres", "postgres://app:secret@127.0.0.1:1/app"])
    #expect(status != 0)
    let output = lines.joined(separator: "\n")
    #expect(!output.contains("secret") && !output.isEmpty, "\(output)")
  }
}
