import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO

// `--cache`: the local cache of a shared store (PostgresStoreOptions.localCachePath).
//
// 1. Opening from the cache with the server halted (SIGSTOP): a fresh store's first `liveData` of one key,
//    and of 1,000 keys one after the other.
// 2. Time to current after the server returns (SIGCONT): until a key opened from the cache holds the
//    version another replica wrote while it was away, and is no longer stale.
// 3. What the cache adds to a `set`: interleaved rounds of sets on a store without a cache and on one with.

enum CacheBenchmark {
  /// A store's options with the cache at `cache` (none for nil).
  static func options(cache: String?) -> PostgresStoreOptions {
    var options = PostgresStoreOptions()
    options.localCachePath = cache
    options.operationTimeout = .seconds(5)
    return options
  }

  static func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
  }

  /// A cache file holding `keys` keys, copied to `copies` paths (each measured store opens its own).
  static func makeCaches(
    _ configuration: PostgresClient.Configuration, folder: String, keys: Int, copies: Int
  ) async throws -> [String] {
    let source = folder + "/source-\(keys).cache"
    do {
      let replica = Replica(configuration, options: options(cache: source))
      for index in 0..<keys {
        try await replica.store.liveData("key-\(index)", default: -1).set(index)
      }
      await replica.stop()
    }
    // The cache writes after the reads on a queue of its own: let it drain.
    try await Task.sleep(for: .seconds(1))
    var paths: [String] = []
    for copy in 0..<copies {
      let path = folder + "/copy-\(keys)-\(copy).cache"
      for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
        try FileManager.default.copyItem(atPath: source + suffix, toPath: path + suffix)
      }
      paths.append(path)
    }
    return paths
  }

  static func run(server: PostgresTestServer, quick: Bool) async throws {
    let configuration = try await server.makeDatabase()
    let folder = NSTemporaryDirectory() + "pld-bench-cache-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let runs = quick ? 2 : 7
    let clock = ContinuousClock()

    // 1. Open from the cache, server halted.
    print("## Opening from the local cache with the server halted (SIGSTOP)\n")
    print("| keys | runs | median ms | worst ms |")
    print("|---|---|---|---|")
    for keys in [1, quick ? 100 : 1_000] {
      let caches = try await makeCaches(configuration, folder: folder, keys: keys, copies: runs)
      var samples: [Double] = []
      for cache in caches {
        try server.suspend()
        let replica = Replica(configuration, options: options(cache: cache))
        let started = clock.now
        for index in 0..<keys {
          let data = try await replica.store.liveData("key-\(index)", default: -1)
          guard data.isStale, data.value == index else {
            throw BenchmarkFailure("key-\(index) did not open from the cache")
          }
        }
        samples.append(milliseconds(clock.now - started))
        try server.unsuspend()
        await replica.stop()
      }
      samples.sort()
      print(
        "| \(keys) | \(runs) | \(format(samples[samples.count / 2])) | \(format(samples.last ?? 0)) |")
    }

    // 2. Time to current once the server returns.
    print(
      "\n## Time to current after the server returns (SIGCONT → the key holds the newest version, fresh)\n")
    var toCurrent: [Double] = []
    let writer = Replica(configuration, options: options(cache: nil))
    for run in 0..<runs {
      let cache = folder + "/current-\(run).cache"
      let key = "current-\(run)"
      let onWriter = try await writer.store.liveData(key, default: 0)
      do {
        let first = Replica(configuration, options: options(cache: cache))
        try await onWriter.set(1)
        _ = try await first.store.liveData(key, default: 0)
        await first.stop()
      }
      try await Task.sleep(for: .milliseconds(200))
      let copy = cache + "-copy"
      for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: cache + suffix) {
        try FileManager.default.copyItem(atPath: cache + suffix, toPath: copy + suffix)
      }
      for value in 2...5 { try await onWriter.set(value) }
      try server.suspend()
      let replica = Replica(configuration, options: options(cache: copy))
      let data = try await replica.store.liveData(key, default: 0)
      guard data.isStale, data.version == 1 else { throw BenchmarkFailure("not opened from the cache") }
      try await Task.sleep(for: .milliseconds(300))
      try server.unsuspend()
      let resumed = clock.now
      while data.version < 5 || data.isStale {
        guard clock.now - resumed < .seconds(30) else { throw BenchmarkFailure("never current") }
        try await Task.sleep(for: .milliseconds(1))
      }
      toCurrent.append(milliseconds(clock.now - resumed))
      await replica.stop()
    }
    await writer.stop()
    toCurrent.sort()
    print("| runs | catchUpInterval | median ms | worst ms |")
    print("|---|---|---|---|")
    print("| \(runs) | 1 s | \(format(toCurrent[toCurrent.count / 2])) | \(format(toCurrent.last ?? 0)) |")

    // 3. The cost of the cache on a set.
    let without = Replica(configuration, options: options(cache: nil))
    let with = Replica(configuration, options: options(cache: folder + "/writes.cache"))
    let plain = try await without.store.liveData("set-plain", default: 0)
    let cached = try await with.store.liveData("set-cached", default: 0)
    try await plain.set(0)
    try await cached.set(0)
    let perRound = quick ? 50 : 500
    var plainRounds: [Double] = []
    var cachedRounds: [Double] = []
    for round in 0..<(quick ? 2 : 10) {
      for contender in round % 2 == 0 ? [plain, cached] : [cached, plain] {
        let started = clock.now
        for value in 1...perRound { try await contender.set(value) }
        let perSet = milliseconds(clock.now - started) / Double(perRound)
        if contender === plain { plainRounds.append(perSet) } else { cachedRounds.append(perSet) }
      }
    }
    await without.stop()
    await with.stop()
    plainRounds.sort()
    cachedRounds.sort()
    let plainMedian = plainRounds[plainRounds.count / 2]
    let cachedMedian = cachedRounds[cachedRounds.count / 2]
    print("\n## What the local cache adds to a `set` (\(perRound) sets per round, interleaved)\n")
    print("| store | median ms per set | ratio |")
    print("|---|---|---|")
    print("| without a cache | \(format(plainMedian)) | 1.00x |")
    print(
      "| with a cache | \(format(cachedMedian)) | \(String(format: "%.2f", cachedMedian / plainMedian))x |")
  }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
