import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import Testing

/// The §5 rules across replicas, against a real PostgreSQL server: each replica is its own client and
/// store on one database.
@Suite(.enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedStoreTests {
  @Test func aWriteOnOneReplicaReachesTheOther() async throws {
    let fixture = try SharedFixture()
    let a = fixture.replica()
    let b = fixture.replica()
    let onA = try await a.store.liveData("greeting", default: "none")
    let onB = try await b.store.liveData("greeting", default: "none")
    #expect(onA.version == 0)
    #expect(onB.value == "none")
    try await onA.set("hello")
    #expect(onA.version == 1)
    #expect(onA.value == "hello")
    #expect(await eventually { onB.version == 1 })
    #expect(onB.value == "hello")
    try await onB.set("back")
    #expect(onB.version == 2)
    #expect(await eventually { onA.version == 2 })
    #expect(onA.value == "back")
    await a.shutDown()
    await b.shutDown()
  }
}
