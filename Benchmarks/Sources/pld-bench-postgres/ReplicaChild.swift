import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO

/// The child side of the replica table: `pld-bench-postgres --replica-child SOCKET USER DATABASE INDEX
/// TASKS KEYS`. One replica process: a running store on its own client (its listener and periodic
/// catch-up included) holding its tasks' keys live, and a raw postgres-nio client beside it. It prints
/// `ready`, then runs each `CONTENDER SECONDS` line it reads (`TASKS` tasks, each writing its own `KEYS`
/// keys in turn) and prints `WRITES SECONDS CPU-SECONDS`; it ends at any other line or at the end of its input.
enum ReplicaChild {
  /// Runs on the main actor, which waits for each line of input (blocking) while the writes run elsewhere.
  @MainActor
  static func run(_ arguments: [String]) async throws {
    guard arguments.count >= 6, let index = Int(arguments[3]), let tasks = Int(arguments[4]),
      let keysPerTask = Int(arguments[5])
    else { throw BenchError("--replica-child SOCKET USER DATABASE INDEX TASKS KEYS") }
    let configuration = PostgresClient.Configuration(
      unixSocketPath: arguments[0], username: arguments[1], password: nil, database: arguments[2])
    let replica = Replica(configuration)
    let raw = RawWriter(configuration)
    var live: [[SharedLiveData<Int>]] = []
    var rawKeys: [[RawKey]] = []
    for task in 0..<tasks {
      var data: [SharedLiveData<Int>] = []
      for key in 0..<keysPerTask {
        data.append(try await replica.store.liveData("p\(index)-t\(task)-k\(key)", default: 0))
      }
      live.append(data)
      rawKeys.append(try await raw.keys((0..<keysPerTask).map { "raw-p\(index)-t\(task)-k\($0)" }))
    }
    let storeKeys = live
    let rawByTask = rawKeys
    try FileHandle.standardOutput.write(contentsOf: Data("ready\n".utf8))
    while let line = readLine() {
      let parts = line.split(separator: " ")
      guard parts.count == 2, let contender = Contender(rawValue: String(parts[0])),
        let seconds = Double(parts[1])
      else { break }
      let cpu = processCPUSeconds()
      let (writes, elapsed) = try await measureWrites(seconds: seconds, tasks: tasks) { task, iteration in
        switch contender {
        case .store:
          let keys = storeKeys[task]
          try await keys[iteration % keys.count].set(iteration)
        case .raw, .notify:
          let keys = rawByTask[task]
          _ = try await raw.write(
            keys[iteration % keys.count], payload: String(iteration), notify: contender == .notify)
        case .prepared:
          let keys = rawByTask[task]
          _ = try await raw.writePrepared(keys[iteration % keys.count], payload: String(iteration))
        }
      }
      try FileHandle.standardOutput.write(
        contentsOf: Data("\(writes) \(elapsed) \(processCPUSeconds() - cpu)\n".utf8))
    }
    await replica.stop()
    await raw.stop()
  }
}
