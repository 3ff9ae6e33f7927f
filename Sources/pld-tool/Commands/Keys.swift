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
        retention option of whichever process writes it.
        """)

    @OptionGroup var options: DatabaseOptions

    /// Keys longer than this are cut in the table (`--json` has them whole).
    static let keyWidth = 48

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let statistics = try inspector.keyStatistics()
      let retentions = try inspector.recordedRetentions()
      let console = Console.current
      if options.json {
        console.writeJSON(.array(statistics.map { Self.json($0, retention: retentions[$0.key]) }))
        return
      }
      guard !statistics.isEmpty else {
        console.writeLine("No keys are stored in \(TerminalText.quoted(options.database)).")
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
