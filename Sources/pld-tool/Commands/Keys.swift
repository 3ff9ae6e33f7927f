import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `keys DB`: every key with its current version, versions kept, last write and size.
  struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "List every key: current version, versions kept, last write time, payload size, schema version, retention.",
      discussion: """
        SCHEMA is the value schema version (PersistentValue.schemaVersion) the current version was written \
        with; verify lists every schema version stored per key. RETENTION is the key's retention recorded \
        in the store ("all", "last N"), which every writer and prune honour; "-" when the key follows the \
        retention option of whichever process writes it. A damaged page stops the listing with an error; \
        --salvage lists the keys that can be read around it.
        """)

    @OptionGroup var options: DatabaseOptions

    @Flag(
      help: """
        On a damaged file, list every key whose rows can still be read — before the damage and after it — \
        and say on standard error which rows could not be read (exit status 1 then). The keys at either \
        end of that stretch may be missing versions there.
        """)
    var salvage = false

    @Option(help: "List only the keys that start with this text (compared by bytes): a collection's NAME/.")
    var prefix: String?

    /// Keys longer than this are cut in the table (`--json` has them whole).
    static let keyWidth = 48

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database, salvaging: salvage)
      defer { inspector.close() }
      let (all, unreadable) =
        salvage ? try inspector.salvageKeyStatistics() : (try inspector.keyStatistics(), [])
      let statistics = all.filter { KeyPrefix.matches($0.key, prefix) }
      if statistics.isEmpty, !unreadable.isEmpty {
        let details = unreadable.map(\.detail).joined(separator: "; ")
        throw CommandError(
          "No key of \(TerminalText.quoted(options.database)) could be read (\(details)). Restore a backup.")
      }
      var problems = unreadable.map { "\($0) could not be read (\($0.detail))" }
      let retentions: [StoreKey: HistoryRetention]
      do {
        retentions = try inspector.recordedRetentions()
      } catch PersistentLiveDataError.corrupt(_, let detail) where salvage {
        // The values were read: list them, without the RETENTION column's figures.
        retentions = [:]
        problems.append("the keys' recorded retentions could not be read (\(detail)); RETENTION shows none")
      }
      list(statistics, retentions: retentions)
      guard !problems.isEmpty else { return }
      let advice =
        unreadable.isEmpty
        ? "" : " The keys at either end of the rows not read may be missing versions there."
      throw CommandError(
        "Listed \(HumanFormat.count(statistics.count, "key")) that could be read from "
          + "\(TerminalText.quoted(options.database)); \(problems.joined(separator: "; ")).\(advice) "
          + "pld-tool export --salvage recovers what can be read.")
    }

    private func list(_ statistics: [KeyStatistics], retentions: [StoreKey: HistoryRetention]) {
      let console = Console.current
      if options.json {
        console.writeJSON(.array(statistics.map { Self.json($0, retention: retentions[$0.key]) }))
        return
      }
      guard !statistics.isEmpty else {
        let which = prefix.map { " that start with \(TerminalText.quoted($0))" } ?? ""
        console.writeLine("No keys\(which) are stored in \(TerminalText.quoted(options.database)).")
        return
      }
      var table = Table([
        .init("KEY"), .init("VERSION", .right), .init("KEPT", .right), .init("OLDEST", .right),
        .init("LAST WRITE"), .init("SIZE", .right), .init("SCHEMA", .right), .init("RETENTION"),
      ])
      for key in statistics {
        table.append([
          TerminalText.truncated(TerminalText.key(key.key), toWidth: Self.keyWidth),
          "\(key.currentVersion)", "\(key.versionCount)", "\(key.oldestVersion)",
          HumanFormat.timeWithAge(milliseconds: key.lastWrittenAtMilliseconds),
          HumanFormat.size(key.payloadSize), "\(key.schemaVersion)",
          RetentionText.column(retentions[key.key]),
        ])
      }
      console.write(table.render())
    }

    static func json(_ key: KeyStatistics, retention: HistoryRetention?) -> JSONValue {
      .object([
        .init("key", .string(key.key)),
        .init("version", .integer(key.currentVersion)),
        .init("versions", .integer(key.versionCount)),
        .init("oldestVersion", .integer(key.oldestVersion)),
        .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: key.lastWrittenAtMilliseconds))),
        .init("size", .integer(key.payloadSize)),
        .init("totalSize", .integer(key.totalPayloadSize)),
        .init("schemaVersion", .integer(key.schemaVersion)),
        .init("retention", RetentionText.json(retention)),
      ])
    }
  }
}
