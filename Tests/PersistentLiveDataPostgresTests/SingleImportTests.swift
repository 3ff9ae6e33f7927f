import PLDTestSupport
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import Testing

/// What the README promises: one import gives the store, the client, the service group and LiveData.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SingleImportTests {
  @Test func oneImportRunsAStoreInAServiceGroup() async throws {
    let client = PostgresClient(configuration: try await PostgresTestServer.shared().makeDatabase())
    let store = PostgresStore(client: client, options: PostgresStoreOptions(retention: .last(5)))
    let group = ServiceGroup(services: [client, store], logger: Logger(label: "single-import"))
    let running = Task { try await group.run() }
    let greeting = try await store.liveData("greeting", default: "none")
    try await greeting.set("hello")
    let versions: [Versioned<String>] = try await greeting.history()
    #expect(versions.map(\.value) == ["hello"])
    await group.triggerGracefulShutdown()
    try await running.value
  }
}
