// The daemon of the DocC article "The main actor in command-line programs and daemons", line for line
// between the markers (Tests/…/Documentation/MainActorInProgramsTests.swift checks that the article
// quotes it, and runs it as `pld-test-child daemon DB limit`).
import Foundation
import Logging
import PersistentLiveData

// Article: begin daemon
/// SIGINT and SIGTERM as an async sequence; their default action (ending the process at once) is off.
func terminationSignals() -> AsyncStream<Int32> {
  AsyncStream { continuation in
    // Dispatch sources are thread-safe, but not marked Sendable.
    nonisolated(unsafe) let sources = [SIGINT, SIGTERM].map { number in
      signal(number, SIG_IGN)  // the dispatch source receives it instead
      let source = DispatchSource.makeSignalSource(signal: number)
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      return source
    }
    continuation.onTermination = { _ in sources.forEach { $0.cancel() } }
  }
}

/// Serves until SIGINT or SIGTERM, following every change of the "limit" setting, then closes the store.
@MainActor
func serve(storePath: String) async throws {
  let log = Logger(label: "example-daemon")  // standard error, a line at a time
  let store = try PersistentStore(path: storePath)
  let limit = try store.liveData("limit", default: 10)

  // Observers run on the main actor, which an async main keeps running.
  let observer = limit.observeForever { log.info("observer: limit \($0)") }

  // Or consume the changes on any executor, without the main actor.
  let consumer = Task.detached {
    for await value in limit.values { log.info("values: limit \(value)") }
  }

  log.info("ready")
  for await number in terminationSignals() {
    log.info("signal \(number): closing")
    break
  }
  consumer.cancel()
  observer.cancel()
  try store.close()  // stops polling; every set that returned has committed
  log.info("closed")
}
// Article: end daemon
