import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `get DB KEY [--version N]`: a value as pretty JSON.
  struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print the value of a key as pretty JSON: the latest version, or the one given.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The version to print, at least 1 (default: the latest).", valueName: "n"),
      transform: NumberArgument.parse(atLeast: 1))
    var version: Int64?

    func validate() throws {
      if let version, version < 1 { throw ValidationError("--version must be at least 1.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let row =
        try version.map { try inspector.row(key: key, version: $0) } ?? inspector.latestRow(key: key)
      let output = RowOutput(row)
      if let error = output.unshowable(database: options.database) { throw error }
      let console = Console.current
      if options.json {
        console.writeJSON(output.json)
      } else {
        console.writeLine(output.prettyValue)
        // For a version asked for, who wrote it: on standard error, so that standard output stays the
        // value's JSON.
        if self.version != nil, row.attribution != nil {
          console.writeError("version \(row.version)\(output.attributionSuffix)\n")
        }
      }
    }
  }
}
