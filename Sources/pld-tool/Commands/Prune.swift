import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `prune DB [KEY] --keep N`: deletes old versions.
  struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Delete the versions older than the newest N of a key, or of every key.",
      discussion: "The latest version is never deleted, and version numbers are never reused.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key (default: every key).")
    var key: String?

    @Option(help: ArgumentHelp("How many of the newest versions to keep (at least 1).", valueName: "n"))
    var keep: Int

    func validate() throws {
      if keep < 1 { throw ValidationError("--keep must be at least 1.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      let keys = try key.map { key in [try inspector.keyStatistics(for: key).key] } ?? inspector.keys()
      inspector.close()

      let store = try StoreAccess.store(options.database, ifMissing: .fail)
      let progress = Progress("pruning", total: keys.count)
      var deleted = 0
      do {
        // One transaction per key: each key is pruned completely or not at all.
        for key in keys {
          deleted += try store.prune(key: key, keep: keep)
          progress.advance()
        }
        progress.finish()
      } catch {
        progress.finish()
        throw error
      }
      try store.close()

      let console = Console.current
      if options.json {
        console.writeJSON(
          .object([
            .init("key", key.map(JSONValue.string) ?? .null), .init("keep", .integer(keep)),
            .init("deleted", .integer(deleted)),
          ]))
        return
      }
      let deletedVersions = HumanFormat.count(deleted, "version")
      if let key {
        console.writeLine(
          "Deleted \(deletedVersions) of key \(TerminalText.key(key)); kept its newest "
            + "\(HumanFormat.count(keep, "version")).")
      } else {
        console.writeLine(
          "Deleted \(deletedVersions) of \(HumanFormat.count(keys.count, "key")); kept the newest \(keep) "
            + "of each.")
      }
    }
  }
}
