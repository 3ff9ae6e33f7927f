import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import Testing

/// The compatibility promise (README): notification payloads carry their format (`pld-notify/2` on their
/// first line), and a listener that meets a newer one — a replica of a later release during a rollout —
/// catches up at once rather than at its next periodic catch-up.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedPayloadFormatTests {
  @Test func aPayloadInANewerFormatMakesTheListenerCatchUpAtOnce() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .seconds(3_600)  // no periodic look during the test
    let b = fixture.replica(options: options)
    let key = "newer-format"
    let data = try await b.store.liveData(key, default: 0)
    try await Listeners.expectListening([b], fixture, "b listens before anyone writes")

    // Version 1, committed by a writer whose notification the server refuses: nothing tells b of it.
    let role = try await fixture.roleWithTablePrivilegesOnly(canNotify: false)
    let child = try SharedProcessTests.child("write", fixture, key: key, count: 1, user: role)
    let (lines, killed) = await child.finish(within: SharedProcessTests.childLimit)
    #expect(!killed && child.exitCode == 0 && lines == ["done 1"], "it committed version 1: \(lines)")
    try await fixture.psql("SELECT pg_notify('pld_changes', E'pld-notify/2\\n1 0 k unrelated')")
    try await Task.sleep(for: .milliseconds(300))
    #expect(data.version == 0, "a payload of the known format naming another key changes nothing")

    // A later release's payload, which b cannot read: b compares with the server now.
    try await fixture.psql("SELECT pg_notify('pld_changes', E'pld-notify/3\\n{\"keys\":[\"newer-format\"]}')")
    #expect(await eventually(.seconds(30)) { data.version == 1 }, "caught up at once")
    await b.shutDown()
  }
}
