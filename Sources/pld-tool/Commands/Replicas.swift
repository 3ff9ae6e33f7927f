#if canImport(PersistentLiveDataPostgres)
import ArgumentParser
import Dispatch
import Foundation
import PersistentLiveData
import PersistentLiveDataPostgres
import PostgresNIO
import Synchronization

extension PLDTool {
  /// `replicas --postgres URL`: the replicas running on a shared store's database, and the migrations
  /// that strand any of them.
  struct Replicas: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "List the replicas running on a shared store's database, and warn of migrations that strand one.",
      discussion: """
        Every PostgresStore.run() of this release or a later one records itself (host, process, library \
        release, the newest shared schema it knows, read-write or read-only) with a heartbeat; a replica \
        silent for a minute is left out. STRANDED BY names the migrations a replica does not know that are \
        marked read-only or incompatible — applied to the database, or known to this pld-tool and applied \
        by the next upgraded replica: after one of them that replica can only read, or cannot start. \
        Nothing is written or migrated. Exit status 1 when a replica is stranded.
        """)

    @Option(
      help: ArgumentHelp(
        "The shared store: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (libpq's sslmode and sslrootcert "
          + "parameters, as for serve --postgres).", valueName: "url"))
    var postgres: String

    @Flag(help: "Print the replicas as JSON.")
    var json = false

    func run() throws {
      let console = Console.current
      let result = Mutex<Result<[SharedReplica], any Error>?>(nil)
      let done = DispatchSemaphore(value: 0)
      Task { [postgres] in
        defer { done.signal() }
        do {
          let replicas = try await Self.list(url: postgres)
          result.withLock { $0 = .success(replicas) }
        } catch {
          result.withLock { $0 = .failure(error) }
        }
      }
      done.wait()
      let replicas = try result.withLock { try $0?.get() } ?? []
      if json {
        console.write(Self.json(replicas))
      } else {
        console.write(Self.table(replicas))
      }
      let stranded = replicas.filter { !$0.strandedBy.isEmpty }
      guard stranded.isEmpty else {
        let names = stranded.map {
          // What a replica (or anyone) wrote in the table: escaped, as every other cell.
          TerminalText.escaped(
            "\($0.host):\($0.processID) (\($0.libraryVersion)) by \($0.strandedBy.joined(separator: ", "))")
        }
        throw CommandError(
          "\(HumanFormat.count(stranded.count, "replica")) stranded: \(names.joined(separator: "; ")). "
            + "After a read-only migration a replica can only read, after an incompatible one it cannot start: "
            + "upgrade them, or stop them before the migration is applied.")
      }
    }

    /// Connects (no store runs: nothing is migrated) and reads the replicas.
    static func list(url text: String) async throws -> [SharedReplica] {
      let url: PostgresURL
      let client: PostgresClient
      do {
        url = try PostgresURL(text)
        _ = try await url.probe()
        client = PostgresClient(configuration: try url.configuration())
      } catch let error as PostgresURLError {
        throw CommandError("--postgres: \(error.description)")
      }
      let running = Task { await client.run() }
      defer { running.cancel() }
      do {
        return try await PostgresStore(client: client).replicas()
      } catch {
        throw CommandError("Could not list the replicas of \(url.redacted): \(error)")
      }
    }

    static func table(_ replicas: [SharedReplica]) -> String {
      guard !replicas.isEmpty else {
        return "No replica of release 0.4 or later is running on this database.\n"
      }
      let time = ISO8601DateFormatter()
      let rows = replicas.map { replica in
        [
          "\(replica.host):\(replica.processID)", replica.libraryVersion, "\(replica.schemaVersion)",
          replica.isReadOnly ? "read-only" : "read-write", time.string(from: replica.heartbeatAt),
          replica.strandedBy.isEmpty ? "-" : replica.strandedBy.joined(separator: ", "),
        ]
      }
      var table = Table(
        ["REPLICA", "LIBRARY", "SCHEMA", "ACCESS", "HEARTBEAT", "STRANDED BY"].map { Table.Column($0) })
      for row in rows { table.append(row.map(TerminalText.escaped)) }
      return table.render()
    }

    static func json(_ replicas: [SharedReplica]) -> String {
      JSONValue.array(replicas.map(\.json)).pretty + "\n"
    }
  }
}

extension SharedReplica {
  /// The replica as `replicas --json` and the inspector's `GET /api/replicas` give it.
  var json: JSONValue {
    let time = ISO8601DateFormatter()
    return .object([
      .init("id", .string(id)), .init("host", .string(host)), .init("pid", .integer(processID)),
      .init("library", .string(libraryVersion)), .init("schema", .integer(schemaVersion)),
      .init("readOnly", .bool(isReadOnly)), .init("startedAt", .string(time.string(from: startedAt))),
      .init("heartbeatAt", .string(time.string(from: heartbeatAt))),
      .init("strandedBy", .array(strandedBy.map { .string($0) })),
    ])
  }
}
#endif
