import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgresTesting
import Testing

@testable import PersistentLiveDataPostgres

#if canImport(Glibc)
import Glibc
#endif

extension ServerFaultSuites {
  /// A local cache locked by another connection is tried again with a backoff, never set aside: the
  /// versions committed while it was locked land in it once it is free, and a replica restarted while the
  /// server is away serves them.
  @Suite(
    .sharedStoreSlot,
    .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"),
    .enabled(
      if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation (initdb, pg_ctl)"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
  struct SharedCacheLockTests {
    @Test func aCacheLockedForASecondIsUsedAgainOnceFree() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        let folder = try TemporaryDirectory("cache-lock")
        defer { folder.remove() }
        let path = folder.path("replica.cache")
        try await CacheHelpers.populate(fixture, cachePath: path, key: "flags", values: ["a"])

        // sqlite3 holds the write lock for a second in an open transaction, then rolls it back (it says
        // when it holds it through `.shell echo`: its own output to a pipe is buffered until it exits).
        let locker = try ChildProcess(
          "/usr/bin/sqlite3",
          [
            path, "BEGIN EXCLUSIVE;",
            "INSERT INTO pld_store_properties (name, value) VALUES ('lock', 'held');",
            ".shell echo locked", ".shell sleep 1", "ROLLBACK;",
          ],
          mergingStandardError: true)
        let line = await locker.readLineOffPool()
        #expect(line == "locked", "\(line ?? "no output")")

        let replica = fixture.replica(options: CacheHelpers.options(cachePath: path))
        let setAside = Recorder<String>()
        let stream = replica.store.events()
        let listening = Task {
          for await event in stream {
            if case .localCacheSetAside(_, let reason) = event { setAside.append(reason) }
          }
        }
        defer { listening.cancel() }
        let flags = try await replica.store.liveData("flags", default: "none")
        #expect(flags.value == "a")
        try await flags.set("b")
        try await flags.set("c")
        // Written while the file is locked: the cache waits with them.
        let waited = await eventually(.milliseconds(500)) {
          replica.log.last(50).contains("locked by another connection")
        }
        #expect(waited, "\(replica.log.last(50))")

        let (_, killed) = await locker.finish(within: .seconds(10))
        #expect(!killed && locker.exitCode == 0, "\(locker.standardError)")
        // Free again: the backoff (a second at most) passes, and the pending versions are written.
        let usedAgain = await eventually(sanitizerScaled(.seconds(5))) {
          replica.log.last(50).contains("no longer locked")
        }
        #expect(usedAgain, "\(replica.log.last(20))")
        #expect(setAside.all.isEmpty, "never set aside: \(setAside.all)")
        replica.store.closeLocalCache()
        await replica.shutDown()
        #expect(try CacheHelpers.cachedRows(path, key: "flags").first?.version == 3)

        // A reopen while the server is away serves them.
        try await FailureHelpers.blocking { try server.halt() }
        let restarted = fixture.replica(options: CacheHelpers.options(cachePath: path))
        let cached = try await restarted.store.liveData("flags", default: "none")
        #expect(cached.value == "c")
        #expect(cached.version == 3)
        #expect(cached.isStale)
        await restarted.shutDown()
        try await FailureHelpers.blocking { try server.resume() }
      }
    }
  }
}

/// The suite under its short name, for the helpers of this file.
typealias SharedCacheLockTests = ServerFaultSuites.SharedCacheLockTests
