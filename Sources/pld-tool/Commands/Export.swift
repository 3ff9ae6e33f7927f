import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `export DB [KEY]`: every version as JSON Lines.
  struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print every stored version as JSON Lines, by key then version (import reads them back).",
      discussion: """
        One JSON object per line: {"key", "version", "writtenAt", "size", "schemaVersion", "author", \
        "reason", "value"}, schemaVersion being the value schema version the version was written with, \
        author and reason who wrote it and why (each left out when not recorded). The output is JSON \
        Lines with or without --json. The rows come from one snapshot of the file. A damaged page stops \
        the export with an error; --salvage exports what can be read around it.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "Export only this key.")
    var key: String?

    @Flag(
      help: """
        On a damaged file, export every row that can still be read — before the damage and after it — \
        and say on standard error which rows could not be read (exit status 1 then). Import the output \
        into a new store to recover it.
        """)
    var salvage = false

    @Option(help: "Export only the keys that start with this text (compared by bytes): a collection's NAME/.")
    var prefix: String?

    func validate() throws {
      if key != nil, prefix != nil { throw ValidationError("Give a KEY or --prefix, not both.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database, salvaging: salvage)
      defer { inspector.close() }
      let console = Console.current
      guard salvage else {
        if let key { _ = try inspector.keyStatistics(for: key) }
        let progress = Progress(
          "exporting", total: console.isErrorTerminal && prefix == nil ? try inspector.rowCount(key: key) : 0)
        defer { progress.finish() }
        var tooDeep: [InspectionError] = []
        try inspector.forEachRow(key: key) { row in
          guard KeyPrefix.matches(row.key, prefix) else { return }
          let output = RowOutput(row)
          console.writeLine(output.json.compact)
          if let error = output.unshowable(database: options.database) { tooDeep.append(error) }
          progress.advance()
        }
        progress.finish()
        try Self.refuse(tooDeep)
        return
      }
      // No count first (it would stop at the damage), nor a look-up of the key: the salvage alone reads.
      let progress = Progress("exporting", total: 0)
      defer { progress.finish() }
      var exported = 0
      var tooDeep: [InspectionError] = []
      let unreadable = try inspector.salvageRows(key: key) { row in
        guard KeyPrefix.matches(row.key, prefix) else { return }
        let output = RowOutput(row)
        console.writeLine(output.json.compact)
        if let error = output.unshowable(database: options.database) { tooDeep.append(error) }
        exported += 1
        progress.advance()
      }
      progress.finish()
      if unreadable.isEmpty { try Self.refuse(tooDeep) }
      if let key, exported == 0, unreadable.isEmpty {
        throw InspectionError.unknownKey(path: options.database, key: key)
      }
      guard !unreadable.isEmpty else { return }
      if exported == 0 {
        let details = unreadable.map(\.detail).joined(separator: "; ")
        throw CommandError(
          "No version of \(TerminalText.quoted(options.database)) could be read (\(details)). Restore a backup."
        )
      }
      let gaps = unreadable.map { "\($0) could not be read (\($0.detail))" }.joined(separator: "; ")
      throw CommandError(
        "Exported \(HumanFormat.count(exported, "version")) that could be read from "
          + "\(TerminalText.quoted(options.database)); \(gaps). Import the output into a new store "
          + "(pld-tool import NEW.db FILE --create); a backup may hold the rest.")
    }

    /// Ends the export with an error when versions nested too deep to be read were exported: their
    /// lines hold the stored text as `rawPayload`, with a null `value`, and `import` refuses them.
    private static func refuse(_ tooDeep: [InspectionError]) throws {
      guard !tooDeep.isEmpty else { return }
      throw CommandError(
        tooDeep.map(\.description).joined(separator: " ")
          + " The exported line holds the stored text as rawPayload, with a null value; import refuses it.")
    }
  }
}
