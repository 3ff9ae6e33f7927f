import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgresTesting
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

#if canImport(Glibc)
import Glibc
#endif

/// A replica that keeps serving while its server is away (`PostgresStoreOptions.localCachePath`): it starts
/// on the cached versions of its keys, says they are stale, refuses writes, and catches up when the server
/// answers again. Each test runs a private server that it stops, halts (SIGSTOP) and resumes.
@Suite(
  .serialized,
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"),
  .enabled(
    if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation (initdb, pg_ctl)"))
struct SharedCacheTests {
  /// How long opening a cached key may take in a test. The rule is 50 ms (measured by the benchmark
  /// package); this bound only tells "answered from the cache" from "waited for the server", whose
  /// timeout is `CacheHelpers.timeout`, on a machine where every suite runs at once.
  static let openBound = Duration.milliseconds(1_000)

  @Test func aColdStartWithTheServerStoppedOpensCachedKeysFromTheCache() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("replica.cache")
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "flags", values: ["a", "b", "c"])

      try await FailureHelpers.blocking { try server.halt() }
      let replica = fixture.replica(options: CacheHelpers.options(cachePath: cachePath))
      let events = Recorder<StoreEvent>()
      let stream = replica.store.events()
      let listening = Task { for await event in stream { events.append(event) } }
      defer { listening.cancel() }
      let started = ContinuousClock.now
      let flags = try await replica.store.liveData("flags", default: "none")
      let elapsed = ContinuousClock.now - started
      TestFigures.record("POSTGRES cache-open-stopped-ms=\(CacheHelpers.milliseconds(elapsed))")
      #expect(elapsed < Self.openBound, "opened from the cache, not after a timeout: \(elapsed)")
      #expect(flags.value == "c")
      #expect(flags.version == 3)
      #expect(flags.isStale)
      #expect(await eventually(.seconds(10)) { !replica.store.isServerReachable })
      #expect(
        await eventually(.seconds(10)) {
          events.all.contains { if case .serverUnreachable = $0 { true } else { false } }
        }, "an event says the server is unreachable")

      // The server returns: the key is confirmed (nothing changed meanwhile) and no longer stale.
      try await FailureHelpers.blocking { try server.resume() }
      let resumed = ContinuousClock.now
      #expect(await eventually(.seconds(20)) { !flags.isStale }, "\(replica.log.last(20))")
      // After a stop, the client's pool reconnects with its own backoff: measured, not bounded here.
      TestFigures.record(
        "POSTGRES cache-time-to-current-after-stop-ms=\(CacheHelpers.milliseconds(ContinuousClock.now - resumed))"
      )
      #expect(flags.version == 3)
      #expect(replica.store.isServerReachable)
      #expect(await eventually(.seconds(10)) { events.all.contains(.serverReachable) }, "and reachable again")
      await replica.shutDown()
    }
  }

  @Test func aColdStartWithTheServerHaltedOpensFromTheCacheAndCatchesUpWithAnotherReplicasWrites()
    async throws
  {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("replica.cache")
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "limits", values: [1, 2])
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "other", values: [7])
      // Another replica writes while this one is not running: versions 3 to 5.
      let writer = fixture.replica()
      let onWriter = try await writer.store.liveData("limits", default: 0)
      for value in 3...5 { try await onWriter.set(value) }
      #expect(onWriter.version == 5)

      _ = try await fixture.psql("CHECKPOINT")
      try await FailureHelpers.blocking { try server.suspend() }
      var options = CacheHelpers.options(cachePath: cachePath)
      options.catchUpInterval = .milliseconds(200)
      let replica = fixture.replica(options: options)
      let started = ContinuousClock.now
      let limits = try await replica.store.liveData("limits", default: 0)
      let elapsed = ContinuousClock.now - started
      TestFigures.record("POSTGRES cache-open-halted-ms=\(CacheHelpers.milliseconds(elapsed))")
      #expect(elapsed < Self.openBound, "opened from the cache, not after a timeout: \(elapsed)")
      #expect(limits.value == 2 && limits.version == 2 && limits.isStale)
      // A second key opens at once too, now that the server is known not to answer.
      let second = ContinuousClock.now
      let other = try await replica.store.liveData("other", default: 0)
      let secondElapsed = ContinuousClock.now - second
      TestFigures.record(
        "POSTGRES cache-open-halted-second-key-ms=\(CacheHelpers.milliseconds(secondElapsed))")
      #expect(secondElapsed < Self.openBound)
      #expect(other.value == 7 && other.isStale)

      let observed = Recorder<Int>()
      let observer = await FailureHelpers.record(limits, into: observed)
      let changes = Task {
        await FailureHelpers.collect(limits.changes(since: 2), count: 4, within: .seconds(60))
      }
      // A version the server brought is heard of with the key confirmed, never still stale.
      let staleWhenHeard = Recorder<Bool>()
      let staleness = await MainActor.run {
        limits.observeForever(receiveCurrent: false) { _ in staleWhenHeard.append(limits.isStale) }
      }

      try await FailureHelpers.blocking { try server.unsuspend() }
      let resumed = ContinuousClock.now
      #expect(
        await eventually(.seconds(30)) { limits.version == 5 && !limits.isStale }, "\(replica.log.last(20))")
      TestFigures.record(
        "POSTGRES cache-time-to-current-ms=\(CacheHelpers.milliseconds(ContinuousClock.now - resumed))")
      #expect(limits.value == 5)
      try await onWriter.set(6)
      #expect(await eventually(.seconds(30)) { limits.version == 6 })

      let streamed = await changes.value
      #expect(streamed.error == nil)
      #expect(streamed.versions.map(\.version) == [3, 4, 5, 6], "each version once, in order")
      #expect(streamed.versions.map(\.value) == [3, 4, 5, 6])
      // Observers run on the main actor, after memory moved.
      #expect(await eventually(.seconds(10)) { observed.all.last == 6 }, "\(observed.all)")
      let seen = observed.all
      #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "memory never moves back: \(seen)")
      await MainActor.run {
        observer.cancel()
        staleness.cancel()
      }
      #expect(!staleWhenHeard.all.isEmpty && !staleWhenHeard.all.contains(true), "\(staleWhenHeard.all)")

      replica.store.closeLocalCache()
      #expect(try CacheHelpers.cachedVersions(cachePath, key: "limits").first == 6, "the cache follows")
      await replica.shutDown()
      await writer.shutDown()
    }
  }

  @Test func writesWhileTheServerIsDownThrowInTimeAndChangeNothingInMemoryOrCache() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("replica.cache")
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "flags", values: ["a", "b"])

      try await FailureHelpers.blocking { try server.halt() }
      let replica = fixture.replica(options: CacheHelpers.options(cachePath: cachePath))
      let flags = try await replica.store.liveData("flags", default: "none")
      #expect(flags.value == "b" && flags.isStale)
      let store = replica.store
      let operations: [(String, @Sendable () async throws -> Void)] = [
        ("set", { try await flags.set("during") }),
        ("update", { try await flags.update { $0 = "updated" } }),
        ("rollback", { try await flags.rollback(to: 1) }),
        ("transaction", { try await store.transaction { try $0.set(flags, to: "in a transaction") } }),
      ]
      for (name, operation) in operations {
        let started = ContinuousClock.now
        do {
          try await operation()
          Issue.record("\(name) succeeded with the server down")
        } catch let error as SharedStoreError {
          #expect(FailureHelpers.isOutage(error), "\(name): \(error)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < CacheHelpers.timeout + .seconds(2), "\(name) took \(elapsed)")
        #expect(flags.value == "b" && flags.version == 2, "\(name) changed nothing in memory")
      }
      replica.store.closeLocalCache()
      #expect(try CacheHelpers.cachedVersions(cachePath, key: "flags").first == 2, "nor in the cache")
      await replica.shutDown()
    }
  }

  @Test func withoutACacheOrForAnUncachedKeyLiveDataThrowsWithinTheOperationTimeout() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("replica.cache")
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "cached", values: [1])
      try await FailureHelpers.blocking { try server.suspend() }
      defer { try? server.unsuspend() }

      var withoutCache = CacheHelpers.options(cachePath: nil)
      withoutCache.operationTimeout = .seconds(1)
      var withCache = CacheHelpers.options(cachePath: cachePath)
      withCache.operationTimeout = .seconds(1)
      // Before the change, the first call waited a minute for the schema, whatever the timeout.
      for (label, options, key) in [
        ("no cache", withoutCache, "cached"), ("uncached key", withCache, "not-cached"),
      ] {
        let replica = fixture.replica(options: options, listening: false)
        let started = ContinuousClock.now
        do {
          _ = try await replica.store.liveData(key, default: 0)
          Issue.record("\(label): liveData succeeded with the server halted")
        } catch let error as SharedStoreError {
          #expect(FailureHelpers.isOutage(error), "\(label): \(error)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(3), "\(label): thrown after \(elapsed), not within the operation timeout")
        await replica.shutDown()
      }
    }
  }

  @Test func aServerThatDoesNotAnswerAtItsAddressIsNotWaitedFor() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("replica.cache")
      try await CacheHelpers.populate(fixture, cachePath: cachePath, key: "flags", values: ["x"])

      // A socket that accepts connections in the kernel and never answers them.
      let silent = try SilentListener()
      defer { silent.close() }
      var configuration = PostgresClient.Configuration(
        host: "127.0.0.1", port: silent.port, username: "test", password: nil, database: fixture.database,
        tls: .disable)
      configuration.options.connectTimeout = .seconds(30)
      let replica = Replica(
        configuration: configuration, options: CacheHelpers.options(cachePath: cachePath), listening: true)
      let started = ContinuousClock.now
      let flags = try await replica.store.liveData("flags", default: "none")
      let elapsed = ContinuousClock.now - started
      #expect(elapsed < Self.openBound, "\(elapsed)")
      #expect(flags.value == "x" && flags.version == 1 && flags.isStale)
      await replica.shutDown()
    }
  }

  @Test func aCacheThatCannotBeUsedIsSetAsideAndTheStoreWorksWithout() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let writer = fixture.replica()
      try await writer.store.liveData("flags", default: "none").set("from the server")
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }

      var cases: [(String, String)] = []
      let damaged = folder.path("damaged.cache")
      try Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }).write(
        to: URL(fileURLWithPath: damaged))
      cases.append(("damaged", damaged))
      let foreign = folder.path("foreign.cache")
      do {
        var options = StoreOptions()
        options.applicationIdentifier = "com.example.another-app"
        let other = try PersistentStore(path: foreign, options: options)
        try other.liveData("flags", default: "theirs").set("theirs")
        try other.close()
      }
      cases.append(("foreign", foreign))
      let newer = folder.path("newer.cache")
      try await CacheHelpers.populate(fixture, cachePath: newer, key: "newer-key", values: ["cached"])
      try CacheHelpers.setUserVersion(newer, to: 9_999)
      cases.append(("newer", newer))
      let readOnly = folder.path("read-only.cache")
      try await CacheHelpers.populate(fixture, cachePath: readOnly, key: "read-only-key", values: [1])
      let immutable = try await FailureHelpers.blocking { CacheHelpers.setImmutable(readOnly, true) }
      defer { if immutable { _ = CacheHelpers.setImmutable(readOnly, false) } }
      if immutable { cases.append(("read-only", readOnly)) }
      // A file locked by another connection is not among them: it is tried again (SharedCacheLockTests).
      for (label, path) in cases {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let replica = fixture.replica(options: CacheHelpers.options(cachePath: path))
        let events = replica.store.events()
        let setAside = Recorder<String>()
        let listening = Task {
          for await event in events {
            if case .localCacheSetAside(let eventPath, _) = event { setAside.append(eventPath) }
          }
        }
        let flags = try await replica.store.liveData("flags", default: "none")
        #expect(!flags.isStale, "\(label): the server's value")
        try await flags.set("written with the cache set aside (\(label))")
        #expect(
          await eventually(.seconds(10)) { setAside.all == [path] }, "\(label): one event names the file")
        listening.cancel()
        #expect(replica.log.last(50).contains("The local cache file cannot be used"), "\(label): a warning")
        #expect(
          try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(label): the file is left alone")
        await replica.shutDown()
      }
      // Nothing on the server was reset.
      let head = try await fixture.psql("SELECT version FROM pld_heads WHERE key = 'flags'")
      #expect(head == "\(1 + cases.count)")
      await writer.shutDown()
    }
  }

  @Test func twoReplicasOnOneMachineEachKeepTheirOwnCacheUnderTheServersVersions() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let pathA = folder.path("a.cache")
      let pathB = folder.path("b.cache")
      let a = fixture.replica(options: CacheHelpers.options(cachePath: pathA))
      let b = fixture.replica(options: CacheHelpers.options(cachePath: pathB))
      let sharedOnA = try await a.store.liveData("shared", default: 0)
      let sharedOnB = try await b.store.liveData("shared", default: 0)
      let onlyA = try await a.store.liveData("only-a", default: "")
      for round in 1...3 {
        try await sharedOnA.set(round * 10)
        #expect(await eventually(.seconds(30)) { sharedOnB.version == sharedOnA.version })
        try await sharedOnB.set(round * 10 + 1)
        #expect(await eventually(.seconds(30)) { sharedOnA.version == sharedOnB.version })
      }
      try await WriteAttribution.$current.withValue(WriteAttribution(author: "ops", reason: "INC-7")) {
        try await onlyA.set("mine")
      }
      let onServer = try #require(try await onlyA.history(limit: 1).first)
      a.store.closeLocalCache()
      b.store.closeLocalCache()
      #expect(try CacheHelpers.cachedVersions(pathA, key: "shared").first == 6)
      #expect(try CacheHelpers.cachedVersions(pathB, key: "shared").first == 6)
      #expect(try CacheHelpers.cachedVersions(pathA, key: "only-a") == [1])
      #expect(try CacheHelpers.cachedVersions(pathB, key: "only-a").isEmpty, "B never opened it")
      // The server's attribution and commit time are kept with the version.
      let cachedRow = try #require(try CacheHelpers.cachedRows(pathA, key: "only-a").first)
      #expect(cachedRow.attribution == WriteAttribution(author: "ops", reason: "INC-7"))
      #expect(cachedRow.writtenAt == onServer.writtenAt, "\(cachedRow.writtenAt) vs \(onServer.writtenAt)")
      // The cache is an ordinary store file, with the attribution and time of the server's rows.
      let inspector = try StoreInspector(path: pathA)
      #expect(try inspector.keys().sorted() == ["only-a", "shared"])
      let tool = ChildProcess.product("pld-tool")
      if FileManager.default.isExecutableFile(atPath: tool) {
        for (arguments, expected) in [
          (["keys", pathA], "shared"), (["get", pathA, "only-a"], "mine"),
          (["history", pathA, "shared"], "31"),
        ] {
          let child = try ChildProcess(tool, arguments, mergingStandardError: true)
          let (lines, _) = await child.finish(within: .seconds(60))
          #expect(child.exitCode == 0, "pld-tool \(arguments): \(lines)")
          #expect(lines.joined(separator: "\n").contains(expected), "pld-tool \(arguments): \(lines)")
        }
      }
      // With the server up, a key opens at the server's version, not the older one of the cache.
      try await sharedOnB.set(99)
      await a.shutDown()
      await b.shutDown()
      let again = fixture.replica(options: CacheHelpers.options(cachePath: pathA))
      let reopened = try await again.store.liveData("shared", default: 0)
      #expect(reopened.version >= 6)
      #expect(await eventually(.seconds(30)) { reopened.version == 7 && !reopened.isStale })
      #expect(reopened.value == 99)
      await again.shutDown()
    }
  }
}

/// What the cache tests share.
enum CacheHelpers {
  /// The operation timeout of the tests' replicas.
  static let timeout = Duration.seconds(5)

  static func options(cachePath: String?) -> PostgresStoreOptions {
    var options = PostgresStoreOptions()
    options.localCachePath = cachePath
    options.operationTimeout = timeout
    options.catchUpInterval = .milliseconds(250)
    return options
  }

  /// Writes `values` as the versions of `key` through a replica with the cache at `cachePath`, then closes
  /// it: the cache holds the last of them, as a replica that stopped leaves it.
  static func populate<Value: Codable & Sendable & Equatable>(
    _ fixture: SharedFixture, cachePath: String, key: String, values: [Value]
  ) async throws {
    let replica = fixture.replica(options: options(cachePath: cachePath), listening: false)
    let data = try await replica.store.liveData(key, default: values[0])
    for value in values { try await data.set(value) }
    replica.store.closeLocalCache()
    await replica.shutDown()
    #expect(try cachedVersions(cachePath, key: key).first == Int64(values.count))
  }

  /// The versions of `key` in the cache file, newest first.
  static func cachedVersions(_ path: String, key: String) throws -> [Int64] {
    var options = StoreOptions()
    options.readOnly = true
    let store = try PersistentStore(path: path, options: options)
    defer { try? store.close() }
    return try store.rows(key: key).map(\.version)
  }

  /// The rows of `key` in the cache file, newest first.
  static func cachedRows(_ path: String, key: String) throws -> [StoredRow] {
    var options = StoreOptions()
    options.readOnly = true
    let store = try PersistentStore(path: path, options: options)
    defer { try? store.close() }
    return try store.rows(key: key)
  }

  /// Sets the SQLite header's `user_version` (the store's schema version) of a closed file.
  static func setUserVersion(_ path: String, to version: UInt32) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: 60)
    try handle.write(contentsOf: withUnsafeBytes(of: version.bigEndian) { Data($0) })
  }

  /// `chattr +i` / `-i`: root ignores file modes. Returns whether it worked.
  static func setImmutable(_ path: String, _ on: Bool) -> Bool {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") else { return false }
    // Waited for with waitpid (ChildProcess), not Process.waitUntilExit, which once missed a child's end.
    guard
      let child = try? ChildProcess("/usr/bin/chattr", [on ? "+i" : "-i", path], mergingStandardError: true)
    else { return false }
    _ = child.readAllLines()
    child.wait()
    return child.exitCode == 0
  }

  static func milliseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
  }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts: connections to it are established by the
/// kernel and never answered, like a server that stopped answering at its address.
final class SilentListener: Sendable {
  let port: Int
  private let descriptor: Int32

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
      _ = Glibc.close(fd)
      throw TestSupportFailure("bind/listen failed")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    descriptor = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  func close() {
    _ = Glibc.close(descriptor)
  }
}

struct TestSupportFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

extension SharedCacheTests {
  @Test func aReplicaKilledDuringCatchUpStartsAgainFromItsCacheAndEndsCurrent() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let cachePath = folder.path("child.cache")
      let writer = fixture.replica()
      let data = try await writer.store.liveData("served", default: 0)
      for value in 1...3 { try await data.set(value) }

      // A first run fills the cache (version 3) and stops.
      let first = try CacheHelpers.child(fixture, cachePath: cachePath, count: 3)
      let (firstLines, firstKilled) = await first.finish(within: SharedProcessTests.childLimit)
      #expect(!firstKilled && firstLines == ["opened 3 fresh", "done 3 fresh"], "\(firstLines)")

      // Versions 4 to 60 are written while it is away; then the server is halted and it starts again.
      for value in 4...60 { try await data.set(value) }
      _ = try await fixture.psql("CHECKPOINT")
      try await FailureHelpers.blocking { try server.suspend() }
      let second = try CacheHelpers.child(fixture, cachePath: cachePath, count: 1_000)
      let opened = try await FailureHelpers.blocking { second.readLine() }
      #expect(opened == "opened 3 stale", "started from its cache: \(opened ?? "no output")")
      // The server returns; the replica is killed as soon as it starts catching up.
      try await FailureHelpers.blocking { try server.unsuspend() }
      let caughtUp = try await FailureHelpers.blocking { second.readLine() }
      second.kill(SIGKILL)
      _ = await second.finish(within: SharedProcessTests.childLimit)
      #expect(caughtUp?.hasPrefix("version ") == true, "\(caughtUp ?? "no output")")

      // What the killed run left in the cache is a version the server committed; the next run ends current.
      let left = try CacheHelpers.cachedVersions(cachePath, key: "served")
      #expect(left.allSatisfy { (3...60).contains($0) } && left == left.sorted(by: >), "\(left)")
      try await data.set(61)
      let third = try CacheHelpers.child(fixture, cachePath: cachePath, count: 61)
      let (thirdLines, thirdKilled) = await third.finish(within: SharedProcessTests.childLimit)
      #expect(!thirdKilled)
      #expect(
        thirdLines.first?.hasPrefix("opened ") == true && thirdLines.last == "done 61 fresh", "\(thirdLines)")
      #expect(try CacheHelpers.cachedVersions(cachePath, key: "served").first == 61)
      await writer.shutDown()
    }
  }
}

extension CacheHelpers {
  /// A replica in a process of its own (`pld-postgres-child serve`) with its cache at `cachePath`.
  static func child(_ fixture: SharedFixture, cachePath: String, count: Int) throws -> ChildProcess {
    try SharedProcessTests.child(
      "serve", fixture, key: "served", count: count, environment: ["PLD_CHILD_CACHE": cachePath])
  }
}

extension SharedCacheTests {
  /// The README's daemon example, `pld-flags` with `PLD_FLAGS_CACHE`, restarted while the server is down.
  @Test func theFlagsExampleRestartedWithTheServerDownServesItsCachedFlags() async throws {
    try await withPrivateServer { server in
      let fixture = try await SharedFixture(server: server)
      let folder = try TemporaryDirectory("cache")
      defer { folder.remove() }
      let environment = ["PLD_FLAGS_CACHE": folder.path("flags.cache")]

      let first = try await FlagsExampleTests.start(fixture, environment: environment)
      #expect(try await HTTP.request("POST", "/flags/new-checkout/on", port: first.port).status == 204)
      #expect(try await HTTP.request("GET", "/flags", port: first.port).body == #"{"new-checkout":true}"#)
      first.process.kill(SIGTERM)
      _ = await first.process.finish(within: .seconds(60))

      try await FailureHelpers.blocking { try server.halt() }
      let second = try await FlagsExampleTests.start(fixture, environment: environment)
      defer {
        second.process.kill(SIGTERM)
        second.process.wait()
      }
      #expect(try await HTTP.request("GET", "/flags", port: second.port).body == #"{"new-checkout":true}"#)
      let status = try await HTTP.request("GET", "/status", port: second.port).body
      #expect(status.contains(#""stale":true"#) && status.contains(#""serverReachable":false"#), "\(status)")
      #expect(try await HTTP.request("POST", "/flags/new-checkout/off", port: second.port).status == 503)

      try await FailureHelpers.blocking { try server.resume() }
      #expect(
        await eventually(.seconds(30)) {
          (try? await HTTP.request("GET", "/status", port: second.port).body)?.contains(#""stale":false"#)
            == true
        }, "confirmed once the server is back")
    }
  }
}
