import ArgumentParser
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PLDTool {
  /// `serve DB` / `serve --postgres URL`: the inspector, a page that shows a store live in a browser.
  struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show a store in a browser, live: every key, each key's versions and what changed.",
      usage: """
        pld-tool serve <database> [--port <port>] [--allow-writes]
        pld-tool serve --postgres <url> [--port <port>] [--allow-writes]
        """,
      discussion: """
        Prints the page's address, http://127.0.0.1:PORT/?token=TOKEN, as the first line on standard \
        output and serves until SIGINT or SIGTERM (exit status 0). It listens on 127.0.0.1 only; every \
        request needs the token (from the address, then from a cookie), and a request for another host \
        name than 127.0.0.1 or localhost is refused (421). The page updates live: a version committed by \
        any process (or replica of a shared store) appears without a reload. Without --allow-writes the \
        store is opened read-only and an SQLite file stays byte-for-byte unchanged; with it, the page \
        can roll a key back to an earlier version (a new version, attributed to "pld-tool serve"). The \
        JSON API the page uses (GET /api/keys, GET /api/keys/KEY/history?limit=N, GET /api/events, \
        POST /api/keys/KEY/rollback) serves scripts as well.
        """)

    @Argument(help: "The store's database file (or --postgres).")
    var database: String?

    @Option(
      help: ArgumentHelp(
        "A shared store on PostgreSQL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or "
          + "postgres://USER@/DATABASE?host=SOCKET-FOLDER[&port=PORT] for a Unix socket; libpq's "
          + "sslmode=disable|prefer|require|verify-ca|verify-full (default prefer) and sslrootcert=FILE|system "
          + "choose TLS. Without a password in the URL, PGPASSWORD is used.",
        valueName: "url"))
    var postgres: String?

    @Option(help: "The port to listen on, on 127.0.0.1 (0: a free port).")
    var port: Int = 0

    @Flag(help: "Allow the page to roll keys back (every other write is refused).")
    var allowWrites = false

    func validate() throws {
      switch (database, postgres) {
      case (nil, nil): throw ValidationError("Give a database file or --postgres URL.")
      case (.some, .some): throw ValidationError("Give either a database file or --postgres URL, not both.")
      default: break
      }
      if port < 0 || port > 65_535 { throw ValidationError("--port must be between 0 and 65535.") }
    }

    func run() throws {
      let console = Console.current
      let (stops, stopper) = AsyncStream.makeStream(of: Void.self)
      let signals = StopSignals(console: console) {
        stopper.yield()
        // Connections that do not close by themselves must not keep the process alive.
        DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
          console.flush()
          exitImmediately()
        }
      }
      defer { withExtendedLifetime(signals) {} }
      let outcome = Mutex<(any Error)?>(nil)
      let done = DispatchSemaphore(value: 0)
      let opening = Mutex<(any Error)?>(nil)
      Task { [port, allowWrites] in
        defer { done.signal() }
        let source: any InspectorSource
        do {
          source = try await makeSource(console: console)
        } catch {
          opening.withLock { $0 = error }
          return
        }
        do {
          try await InspectorServer.run(
            source: source, port: port, allowWrites: allowWrites, console: console, stop: stops)
        } catch {
          outcome.withLock { $0 = error }
        }
        await source.close()
      }
      done.wait()
      if let error = opening.withLock({ $0 }) { throw error }
      if let error = outcome.withLock({ $0 }) { throw CommandError("The inspector stopped: \(error)") }
    }

    private func makeSource(console: Console) async throws -> any InspectorSource {
      if let database { return try SQLiteInspectorSource(path: database, allowWrites: allowWrites) }
      #if canImport(PersistentLiveDataPostgres)
      return try await PostgresInspectorSource(
        url: postgres ?? "", allowWrites: allowWrites, console: console)
      #else
      throw CommandError("This pld-tool was built without PostgreSQL support (PLD_WITHOUT_POSTGRES=1).")
      #endif
    }
  }
}

/// `exit(0)`, out of reach of ParsableCommand's own `exit(withError:)`.
private func exitImmediately() -> Never {
  exit(0)
}
