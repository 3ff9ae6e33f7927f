import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import Testing

/// The compatibility promise (README) on a shared store: replicas of the expand release write schema 1 on
/// every write path, so the replicas still on the old build never meet a value they cannot read during the
/// rollout.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedWrittenSchemaVersionTests {
  @Test func anExpandReplicaWritesTheOldFormOnEveryPathAndAnOldReplicaReadsIt() async throws {
    let fixture = try await SharedFixture()
    let expand = fixture.replica()
    let old = fixture.replica()
    let blank = ProfileReads2Writes1(name: "", email: "")
    let profile = try await expand.store.liveData("profile", default: blank)
    let oldProfile = try await old.store.liveData("profile", default: ProfileV1(name: ""))
    try await profile.set(.init(name: "ada", email: "ada@example.com"))  // 1: set
    #expect(profile.value.email == "ada@example.com", "memory keeps what was set")
    _ = try await profile.update { $0.name = "ada l." }  // 2: update
    try await profile.set(.init(name: "grace", email: "g@example.com"), ifVersion: 2)  // 3: conditional
    try await expand.store.transaction { transaction in  // 4: a transaction
      try transaction.set(profile, to: .init(name: "barbara", email: "b@example.com"))
    }
    try await profile.rollback(to: 1)  // 5: rollback
    let people = try await expand.store.collection("people", of: ProfileReads2Writes1.self)
    try await people.set(.init(name: "alan", email: "a@example.com"), for: "1")
    try await expand.store.transaction { transaction in
      try transaction.set(.init(name: "kurt", email: "k@example.com"), for: "2", in: people)
    }

    #expect(
      try await fixture.psql("SELECT string_agg(DISTINCT schema_version::text, ',') FROM pld_values") == "1",
      "every row in schema 1")
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values WHERE payload LIKE '%email%'") == "0")
    // The old replica follows every version, none too new for it.
    #expect(await eventually(.seconds(30)) { oldProfile.version == 5 })
    #expect(oldProfile.value == ProfileV1(name: "ada"))
    let oldPeople = try await old.store.collection("people", of: ProfileV1.self)
    #expect(oldPeople.value.mapValues(\.name) == ["1": "alan", "2": "kurt"])
    await expand.shutDown()

    // The contract release writes schema 2: then the old replica meets a version it cannot read.
    let heard = Recorder<StoreEvent>()
    let events = old.store.events()
    let listening = Task { for await event in events { heard.append(event) } }
    defer { listening.cancel() }
    let contract = fixture.replica()
    let contracted = try await contract.store.liveData(
      "profile", default: ProfileWrites2(name: "", email: ""))
    #expect(contracted.value == ProfileWrites2(name: "ada", email: ""), "reads the schema-1 row")
    try await contracted.set(.init(name: "ada", email: "ada@example.com"))
    #expect(
      try await fixture.psql(
        "SELECT schema_version FROM pld_values WHERE version = 6 AND payload LIKE '%ada@example.com%'") == "2"
    )
    #expect(
      await eventually(.seconds(30)) {
        heard.all.contains {
          if case .undecodableVersion("profile", 6, .valueSchemaTooNew) = $0 { true } else { false }
        }
      }, "the old replica met version 6 and reported it: \(heard.all)")
    #expect(oldProfile.value == ProfileV1(name: "ada"), "the old replica keeps its last readable value")
    await contract.shutDown()
    await old.shutDown()
  }
}
