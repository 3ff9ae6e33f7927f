import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `rollback DB KEY VERSION`: writes a new version with the content of an older one.
  struct Rollback: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Write a new version of a key with the content of an earlier version.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Argument(
      help: "The version whose content becomes the new version (at least 1).",
      transform: NumberArgument.parse(atLeast: 1))
    var version: Int64

    @OptionGroup var attribution: AttributionOptions

    func validate() throws {
      if version < 1 { throw ValidationError("<version> must be at least 1.") }
    }

    func run() throws {
      // Check read-only first: a clear error for a missing file, an unknown key or a pruned version.
      let inspector = try StoreAccess.inspector(options.database)
      _ = try inspector.row(key: key, version: version)
      inspector.close()

      let store = try StoreAccess.store(options.database, ifMissing: .fail)
      let written = try attribution.recording { try store.rollbackJSON(key: key, to: version) }
      try store.close()
      try WrittenVersion(database: options.database, key: key, version: written).report(
        json: options.json, extra: [.init("restoredVersion", .integer(version))],
        suffix: " with the content of version \(version)")
    }
  }
}
