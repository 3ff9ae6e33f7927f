import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `export DB [KEY]`: every version as JSON Lines.
  struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print every stored version as JSON Lines, by key then version (import reads them back).",
      discussion: """
        One JSON object per line: {"key", "version", "writtenAt", "size", "schemaVersion", "value"}, \
        schemaVersion being the value schema version the version was written with. The output is JSON \
        Lines with or without --json. The rows come from one snapshot of the file.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "Export only this key.")
    var key: String?

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      if let key { _ = try inspector.keyStatistics(for: key) }
      let console = Console.current
      let progress = Progress(
        "exporting", total: console.isErrorTerminal ? try inspector.rowCount(key: key) : 0)
      defer { progress.finish() }
      try inspector.forEachRow(key: key) { row in
        console.writeLine(RowOutput(row).json.compact)
        progress.advance()
      }
    }
  }
}
