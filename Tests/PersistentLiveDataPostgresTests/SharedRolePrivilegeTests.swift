import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import Testing

/// Least privilege: a service whose role may only read and write the store's tables (an owner role ran
/// the migrations) serves as any other replica — opens, writes, hears the others and is heard — and on a
/// database nobody migrated yet it gets an error that says the server refused it, with nothing created.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedRolePrivilegeTests {
  @Test func aRoleThatMayOnlyReadAndWriteTheTablesServesOnAMigratedDatabase() async throws {
    let fixture = try await SharedFixture()
    let owner = fixture.replica()
    let ownerData = try await owner.store.liveData("limits", default: 0)
    try await ownerData.set(1)
    let role = try await fixture.roleWithTablePrivilegesOnly()
    #expect(
      try await fixture.psql("SELECT has_schema_privilege('\(role)', 'public', 'CREATE')") == "f",
      "the role may not create anything")

    var configuration = fixture.configuration
    configuration.username = role
    let service = Replica(configuration: configuration, options: PostgresStoreOptions(), listening: true)
    let data = try await service.store.liveData("limits", default: 0)
    #expect(data.value == 1, "it read the owner's version")
    try await Listeners.expectListening([owner, service], fixture, "both listen")
    try await data.set(2)
    #expect(await eventually { ownerData.value == 2 }, "the owner heard the service's write")
    try await ownerData.set(3)
    #expect(await eventually { data.value == 3 }, "the service heard the owner's write")
    #expect(service.runOutcome.value == nil, "its run() goes on: \(service.log.last(5))")
    await service.shutDown()
    await owner.shutDown()
  }

  @Test func onADatabaseNobodyMigratedTheRoleIsToldTheServerRefusedIt() async throws {
    let fixture = try await SharedFixture()
    let role = try await fixture.roleWithTablePrivilegesOnly()
    var configuration = fixture.configuration
    configuration.username = role
    let service = Replica(configuration: configuration, options: PostgresStoreOptions(), listening: false)
    do {
      _ = try await service.store.liveData("limits", default: 0)
      Issue.record("opened a key on a database without the store's tables")
    } catch {
      let text = "\(error)"
      #expect(text.contains("42501") && text.contains("permission denied"), "\(text)")
    }
    #expect(
      try await fixture.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pld_%'") == "0",
      "nothing was created")
    await service.shutDown()
  }
}
