import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `backup DB DEST`: a consistent single-file copy of a store, also while applications write to it.
  struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Copy a store into a new single file, also while applications write to it.",
      discussion: """
        The copy holds every commit made before it began, also those still in the store's -wal file \
        (which a plain cp of the .db file misses), with every key, version and writtenAt, and opens as a \
        store. The store itself is only read. Nothing at DEST is ever overwritten: an existing file, even \
        an empty one, a folder or a symbolic link is an error. The copy is synced to the disk before the \
        command returns.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: ArgumentHelp("Where to create the copy; its folder must exist.", valueName: "dest"))
    var destination: String

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      try inspector.backup(to: destination)
      let console = Console.current
      if options.json {
        console.writeJSON(
          .object([
            .init("database", .string(options.database)), .init("backup", .string(destination)),
            .init("keys", .integer(try inspector.keys().count)),
          ]))
        return
      }
      console.writeLine(
        "Copied \(TerminalText.quoted(options.database)) to \(TerminalText.quoted(destination)).")
    }
  }
}
