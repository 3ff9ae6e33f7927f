import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `delete DB KEY`: removes a key with every version, through the library's `removeKey`.
  struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Delete a key with every stored version.",
      discussion: """
        The removal takes the next version number: applications that have the key live see its default \
        value at that version, and the next write of the key continues above it (version numbers are \
        never reused). A key that is not stored is an error. To keep the history and write the default \
        value instead, use the application's reset(). The removal records --author and --reason in \
        pld_removed_keys.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key to delete.")
    var key: String

    @OptionGroup var attribution: AttributionOptions

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      let statistics = try inspector.keyStatistics(for: key)
      inspector.close()

      let store = try StoreAccess.store(options.database, ifMissing: .fail)
      try attribution.recording { try store.removeKey(key) }
      try store.close()

      let console = Console.current
      if options.json {
        console.writeJSON(
          .object([
            .init("key", .string(key)), .init("deleted", .integer(statistics.versionCount)),
            .init("lastVersion", .integer(statistics.currentVersion)),
          ]))
        return
      }
      console.writeLine(
        "Deleted key \(TerminalText.key(key)) with its \(HumanFormat.count(statistics.versionCount, "version")) "
          + "(the latest was \(statistics.currentVersion)).")
    }
  }
}
