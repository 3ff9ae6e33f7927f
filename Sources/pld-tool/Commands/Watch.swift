import ArgumentParser
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PLDTool {
  /// `watch DB [KEY]`: prints each new version as it is committed, until SIGINT/SIGTERM.
  struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print each new version as soon as any process commits it, until interrupted.",
      discussion: """
        Polls PRAGMA data_version every 50 ms on a read-only connection (a few microseconds each) and \
        prints every version committed since the last poll: key, version, time and value on one line, or \
        with --json one JSON object per line. A notice on standard error says when watching has begun. \
        Stops on SIGINT or SIGTERM with exit status 0.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "Watch only this key.")
    var key: String?

    /// The time between two polls, in microseconds.
    static let pollInterval: useconds_t = 50_000

    func run() throws {
      let console = Console.current
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      if inspector.accessMode == .immutable {
        throw CommandError(
          "\(TerminalText.quoted(options.database)) can only be opened as an immutable file (its folder is not writable), so new versions cannot be seen."
        )
      }
      let signals = StopSignals(console: console)
      defer { withExtendedLifetime(signals) {} }

      var lastSeen = try latestVersions(inspector)
      var dataVersion = try inspector.dataVersion()
      // Always on standard error: it tells people and scripts that versions committed from now on appear.
      console.writeError(
        "Watching \(TerminalText.quoted(options.database)) for new versions; press Ctrl-C to stop.\n")
      while !console.isStopRequested {
        usleep(Self.pollInterval)
        let current: Int64
        do {
          current = try inspector.dataVersion()
        } catch PersistentLiveDataError.busy {
          continue  // a writer is recovering or resetting the WAL: try again at the next poll
        }
        guard current != dataVersion else { continue }
        dataVersion = current
        for (key, latest) in try latestVersions(inspector).sorted(by: { $0.key < $1.key }) {
          let seen = lastSeen[key] ?? 0
          guard latest > seen else { continue }
          for row in try inspector.rows(key: key, after: seen) {
            print(RowOutput(row), to: console)
          }
          lastSeen[key] = latest
        }
      }
    }

    private func latestVersions(_ inspector: StoreInspector) throws -> [String: Int64] {
      guard let key else { return try inspector.latestVersions() }
      return try inspector.versionRange(of: key).map { [key: $0.latest] } ?? [key: 0]
    }

    private func print(_ row: RowOutput, to console: Console) {
      if options.json {
        console.writeLine(row.json.compact)
      } else {
        console.writeLine(
          "\(TerminalText.key(row.row.key))  \(row.row.version)  "
            + "\(HumanFormat.preciseLocalTime(milliseconds: row.row.writtenAtMilliseconds))  \(row.compactValue)"
        )
      }
      console.flush()
    }
  }
}
