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
        prints every version committed since the last poll, each exactly once and in order per key: key, \
        version, time and value on one line, or with --json one JSON object per line. With --since N, the \
        stored versions after N are printed first (of every key, or of KEY). Versions pruned before they \
        could be printed are named in a notice on standard error, never skipped silently. A notice on \
        standard error says when watching has begun. Stops on SIGINT or SIGTERM with exit status 0.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "Watch only this key.")
    var key: String?

    @Option(
      help:
        "Watch only the keys that start with this text (compared by bytes), new ones included: a collection's NAME/."
    )
    var prefix: String?

    @Option(
      parsing: .unconditional,
      help: "Print the stored versions after this one first (0: every version kept), then go on watching.",
      transform: NumberArgument.parse(atLeast: 0))
    var since: Int64?

    func validate() throws {
      if let since, since < 0 { throw ValidationError("--since must be at least 0.") }
      if key != nil, prefix != nil { throw ValidationError("Give a KEY or --prefix, not both.") }
    }

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

      // One cursor per key: each version exactly once, in order; a gap (pruned versions) is reported.
      var cursors: [StoreKey: VersionCursor] = [:]
      for (key, latest) in try latestVersions(inspector) {
        cursors[key] = VersionCursor(key: key.text, after: since ?? latest)
      }
      var dataVersion = try inspector.dataVersion()
      // Always on standard error: it tells people and scripts that versions committed from now on appear.
      console.writeError(
        "Watching \(TerminalText.quoted(options.database)) for new versions; press Ctrl-C to stop.\n")
      if since != nil { try printNewVersions(inspector, cursors: &cursors, console: console) }
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
        try printNewVersions(inspector, cursors: &cursors, console: console)
      }
    }

    /// Prints every version after each key's cursor, keys in byte order; a key first seen now starts
    /// from its version 1 (or from `--since`).
    private func printNewVersions(
      _ inspector: StoreInspector, cursors: inout [StoreKey: VersionCursor], console: Console
    ) throws {
      let heads = try latestVersions(inspector).sorted {
        $0.key.text.utf8.lexicographicallyPrecedes($1.key.text.utf8)
      }
      for (storeKey, latest) in heads {
        let key = storeKey.text
        var cursor = cursors[key] ?? VersionCursor(key: key, after: since ?? 0)
        guard latest > cursor.position else { continue }
        for row in try inspector.rows(key: key, after: cursor.position) {
          do {
            try cursor.advance(over: row)
          } catch {
            console.writeError(
              "Versions \(cursor.position + 1) to \(row.version - 1) of key \(TerminalText.quoted(key)) were pruned before they could be printed.\n"
            )
            cursor = VersionCursor(key: key, after: row.version)
          }
          print(RowOutput(row), to: console)
        }
        cursors[key] = cursor
      }
    }

    private func latestVersions(_ inspector: StoreInspector) throws -> [StoreKey: Int64] {
      guard let key else {
        return try inspector.latestVersions().filter { KeyPrefix.matches($0.key.text, prefix) }
      }
      return [StoreKey(key): try inspector.versionRange(of: key)?.latest ?? 0]
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
