import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgresTesting
import Testing

@testable import PersistentLiveDataPostgres

extension ServerFaultSuites {
  /// A key or member removed on the server leaves the local cache too: a replica that starts while the
  /// server is away never opens a removed value from it.
  @Suite(
    .enabled(
      if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation (initdb, pg_ctl)")
  )
  struct SharedCacheRemovalTests {
    @Test func removalsByThisReplicaOrAnotherLeaveTheCacheAndAreNeverOpenedFromIt() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        let folder = try TemporaryDirectory("cache-removal")
        defer { folder.remove() }
        let cachePath = folder.path("a.cache")
        // While the server is up, a busy machine's pace rather than the halted server's short timeout.
        var options = CacheHelpers.options(cachePath: cachePath)
        options.operationTimeout = .seconds(60)
        let a = fixture.replica(options: options)
        options.localCachePath = nil
        let b = fixture.replica(options: options)

        // On A: a live key removed by B, one removed by A itself, one kept, and two members of a
        // collection A wrote, one of which B removes.
        let removedElsewhere = try await a.store.liveData("removed-elsewhere", default: "none")
        try await removedElsewhere.set("old")
        let removedHere = try await a.store.liveData("removed-here", default: "none")
        try await removedHere.set("old")
        let kept = try await a.store.liveData("kept", default: "none")
        try await kept.set("still here")
        let todo = try await a.store.collection("todo", of: String.self)
        try await todo.set("milk", for: "1")
        try await todo.set("eggs", for: "2")
        a.store.flushLocalCache()
        #expect(
          try CacheHelpers.cachedVersions(cachePath, key: "todo/1") == [1], "the member is cached first")

        try await b.store.removeKey("removed-elsewhere")
        let todoOnB = try await b.store.collection("todo", of: String.self)
        try await todoOnB.remove("1")
        try await a.store.removeKey("removed-here")
        #expect(await eventually(.seconds(30)) { removedElsewhere.value == "none" && todo.value["1"] == nil })
        #expect(removedElsewhere.version == 2, "the removal took version 2")

        // The cache forgot the three removed keys, and only them.
        a.store.flushLocalCache()
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "removed-elsewhere").isEmpty)
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "removed-here").isEmpty)
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "todo/1").isEmpty)
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "todo/2") == [1])
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "kept") == [1])

        // A version written after the removal is cached again, under the server's number (3).
        try await b.store.liveData("removed-elsewhere", default: "none").set("new")
        #expect(await eventually(.seconds(30)) { removedElsewhere.value == "new" })
        a.store.flushLocalCache()
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "removed-elsewhere") == [3])
        try await b.store.removeKey("removed-elsewhere")
        #expect(await eventually(.seconds(30)) { removedElsewhere.value == "none" })
        a.store.closeLocalCache()
        #expect(try CacheHelpers.cachedVersions(cachePath, key: "removed-elsewhere").isEmpty)
        await a.shutDown()
        await b.shutDown()

        // With the server halted, a new replica on the same cache opens the kept key from it, and never
        // opens a removed one with its old value.
        try await FailureHelpers.blocking { try server.halt() }
        let again = fixture.replica(options: CacheHelpers.options(cachePath: cachePath))
        let keptAgain = try await again.store.liveData("kept", default: "none")
        #expect(keptAgain.value == "still here" && keptAgain.isStale)
        for key in ["removed-elsewhere", "removed-here", "todo/1"] {
          let reopened = try? await again.store.liveData(key, default: "none")
          #expect(
            reopened.map { $0.value == "none" } ?? true,
            "\(key) opened from the cache as \(reopened?.value ?? "")")
        }
        try await FailureHelpers.blocking { try server.resume() }
        await again.shutDown()
      }
    }
  }
}
