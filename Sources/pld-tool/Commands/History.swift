import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `history DB KEY [--limit N | --all]`: versions newest first, the newest 20 unless told otherwise.
  struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "List the stored versions of a key, newest first: version, time, size, schema version, author and "
        + "reason (when recorded) and value. The newest \(History.defaultLimit) unless --limit or --all says "
        + "otherwise; when older ones are left out, standard error says so.")

    /// How many versions are shown without `--limit` or `--all`.
    static let defaultLimit = 20

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("Show at most this many versions (at least 1).", valueName: "n"),
      transform: NumberArgument.parse(atLeast: 1))
    var limit: Int?

    @Flag(help: "Show every stored version.")
    var all = false

    func validate() throws {
      if let limit, limit < 1 {
        throw ValidationError("--limit must be at least 1.")
      }
      if all && limit != nil { throw ValidationError("Give --limit or --all, not both.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let shown = all ? nil : (limit ?? Self.defaultLimit)
      // One more than shown: whether older versions were left out.
      var rows = try inspector.rows(key: key, limit: shown.map { $0 + 1 }).map(RowOutput.init)
      let console = Console.current
      if let shown, rows.count > shown {
        rows.removeLast()
        console.writeError(
          "pld-tool: the newest \(shown) versions of \(TerminalText.quoted(key)); older ones are left out "
            + "(--limit N or --all to see them).")
      }
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
