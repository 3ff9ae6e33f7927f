import Foundation
import Logging
import PersistentLiveData
import PersistentLiveDataPostgres

/// The replica's work, run as the last service of its group so that it stops first on SIGTERM: it opens
/// every slot's key, logs each value its observers get and each event of the store, and writes its own
/// key `rate` times a second, logging each write's outcome.
struct DrillWork: Service {
  let store: PostgresStore

  func run() async throws {
    var keys: [SharedLiveData<DrillValue>] = []
    for slot in 0..<DrillSettings.replicas {
      let live = try await store.liveData("drill/r\(slot)", default: DrillValue(seq: 0, writer: "", at: 0))
      keys.append(live)
    }
    let events = store.events()
    let eventTask = Task {
      for await event in events {
        if case .undecodableVersion(let key, let version, let error) = event {
          DrillLog.emit("undecodable", ["key": key, "version": version, "error": "\(error)"])
        }
      }
    }
    defer { eventTask.cancel() }
    let observers = await observe(keys)
    defer { Task { @MainActor in observers.forEach { $0.cancel() } } }
    DrillLog.emit("ready", ["build": DrillSettings.build, "writes": DrillSettings.writesSchema])
    try await write(keys[DrillSettings.slot])
  }

  @MainActor
  private func observe(_ keys: [SharedLiveData<DrillValue>]) -> [Observer<DrillValue>] {
    keys.enumerated().map { slot, live in
      live.observeForever { value in DrillLog.emit("seen", ["k": slot, "seq": value.seq]) }
    }
  }

  private func write(_ live: SharedLiveData<DrillValue>) async throws {
    let interval = Duration.nanoseconds(Int64(1e9 / DrillSettings.rate))
    let clock = ContinuousClock()
    var next = clock.now
    var seq = live.value.seq
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
      next += interval
      seq += 1
      let started = Date().timeIntervalSince1970
      do {
        try await live.set(
          DrillValue(seq: seq, writer: "\(DrillSettings.slot)/\(DrillSettings.build)", at: started))
        DrillLog.emit("write", ["k": DrillSettings.slot, "seq": seq, "t0": started, "ok": true])
      } catch {
        DrillLog.emit(
          "write", ["k": DrillSettings.slot, "seq": seq, "t0": started, "ok": false, "error": "\(error)"])
        seq = live.value.seq
      }
      if next > clock.now { try? await Task.sleep(until: next, clock: clock) } else { next = clock.now }
    }
  }
}

/// Runs a replica until SIGTERM: its PostgresClient, its PostgresStore and the drill's work.
func runSharedReplica() async -> Int32 {
  var logger = Logger(label: "drill-replica")
  logger.logLevel = .error
  let configuration = PostgresClient.Configuration(
    host: DrillSettings.host, port: DrillSettings.port, username: DrillSettings.user, password: nil,
    database: DrillSettings.database, tls: .disable)
  let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
  var options = PostgresStoreOptions(retention: .last(100), onUndecodable: .lastDecodable, logger: logger)
  options.catchUpInterval = .milliseconds(DrillSettings.catchUpMilliseconds)
  options.operationTimeout = .seconds(5)
  let store = PostgresStore(client: client, options: options)
  let group = ServiceGroup(
    configuration: ServiceGroupConfiguration(
      services: [
        .init(service: client), .init(service: store),
        .init(service: DrillWork(store: store), successTerminationBehavior: .gracefullyShutdownGroup),
      ],
      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
  DrillLog.emit("start", ["build": DrillSettings.build, "pid": Int(getpid())])
  do {
    try await group.run()
    DrillLog.emit("exit", ["ok": true])
    return 0
  } catch {
    DrillLog.emit("exit", ["ok": false, "error": "\(error)"])
    return 1
  }
}
