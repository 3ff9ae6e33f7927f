import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `history DB KEY [--limit N]`: versions newest first.
  struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "List the stored versions of a key, newest first: version, time, size, schema version, author and "
        + "reason (when recorded) and value.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("Show at most this many versions (at least 1).", valueName: "n"),
      transform: NumberArgument.parse(atLeast: 1))
    var limit: Int?

    func validate() throws {
      if let limit, limit < 1 {
        throw ValidationError("--limit must be at least 1.")
      }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let rows = try inspector.rows(key: key, limit: limit).map(RowOutput.init)
      let console = Console.current
      if options.json {
        console.writeJSON(.array(rows.map(\.json)))
        return
      }
      for (offset, row) in rows.enumerated() {
        if offset > 0 { console.writeLine() }
        console.writeLine(row.heading)
        console.writeLine(row.prettyValue)
      }
    }
  }
}
