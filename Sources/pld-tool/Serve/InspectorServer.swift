import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Runs the inspector's HTTP server (Hummingbird) on 127.0.0.1 until `stop` yields.
///
/// Reads every key's summary first, then binds (`port` 0: a free port), prints the page's address as
/// the first line of standard output, and publishes the store's new versions to the page's event
/// streams until it stops.
///
/// ```swift
/// try await InspectorServer.run(
///   source: source, port: 0, allowWrites: false, console: .standard, stop: stops)
/// ```
enum InspectorServer {
  /// The port the server is bound to, once it is.
  final class BoundPort: Sendable {
    private let value: Atomic<Int>

    init(_ port: Int = 0) { value = Atomic(port) }

    var port: Int { value.load(ordering: .acquiring) }

    func set(_ port: Int) { value.store(port, ordering: .releasing) }
  }

  static func run(
    source: any InspectorSource, port: Int, allowWrites: Bool, console: Console, stop: AsyncStream<Void>
  ) async throws {
    let feed = VersionFeed(keys: try await source.summaries())
    if let limitation = source.limitation { console.writeError("pld-tool serve: \(limitation)\n") }
    let boundPort = BoundPort()
    let security = InspectorSecurity(boundPort: boundPort)
    let responder = InspectorResponder(
      security: security, source: source, feed: feed, allowWrites: allowWrites, console: console)
    let app = Application(
      responder: responder,
      configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
      onServerRunning: { channel in
        boundPort.set(channel.localAddress?.port ?? port)
        console.writeLine(security.address)
        console.flush()
      },
      logger: Logger(label: "pld-tool serve", factory: { _ in SwiftLogNoOpLogHandler() }))
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await app.run() }
      group.addTask {
        try await source.watch(publishingTo: feed)
        // Not live (an immutable file): serve what was read until stopped.
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
      }
      group.addTask {
        while !Task.isCancelled {
          try await Task.sleep(for: ServerSentEvents.pingInterval)
          feed.ping()
        }
      }
      group.addTask {
        for await _ in stop { return }
      }
      // The first task to end is the stop (or a failure, which is thrown).
      try await group.next()
      feed.finishAll()
      group.cancelAll()
    }
  }
}
