import ArgumentParser
import Foundation
import PersistentLiveData

extension PLDTool {
  /// `set DB KEY JSON`: writes a new version of a key.
  struct Set: ParsableCommand {
    /// The highest schema version stored in `database` (0 when it holds no version).
    static func highestSchemaVersion(_ database: String) throws -> Int {
      let inspector = try StoreAccess.inspector(database)
      defer { inspector.close() }
      return try inspector.highestSchemaVersion()
    }

    static let configuration = CommandConfiguration(
      abstract: "Write a new version of a key (the JSON is validated first).",
      discussion: """
        The value is written through the library, like an application's set: the next version number, \
        the library's JSON format, and running applications see it. The store must exist: a missing \
        database file is an error, and nothing is created, unless --create is given. Pass - as JSON to read the value from standard input. The version records the value schema \
        version of the key's current version (1 for a new key): write the JSON in that shape, or give \
        the shape's version with --schema-version.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Argument(
      help: ArgumentHelp("The value as JSON, or - to read it from standard input.", valueName: "json"))
    var value: String

    @Option(
      help: ArgumentHelp(
        "The value schema version of the JSON's shape (default: the current version's).", valueName: "n"))
    var schemaVersion: Int?

    @OptionGroup var creation: CreateOption

    func validate() throws {
      if let schemaVersion, schemaVersion < 1 {
        throw ValidationError("--schema-version must be at least 1.")
      }
    }

    func run() throws {
      try StoreAccess.checkPresence(options.database, ifMissing: creation.ifMissing)
      let text = value == "-" ? try StandardInput.readAll() : value
      do {
        _ = try JSONParser.parse(text)
      } catch {
        throw CommandError.invalidJSON(key: key, error)
      }
      if key.isEmpty { throw PersistentLiveDataError.invalidKey(key: key, reason: "a key cannot be empty") }
      let store = try StoreAccess.store(options.database, ifMissing: creation.ifMissing)
      let highest = try schemaVersion.map { _ in try Self.highestSchemaVersion(options.database) }
      let version = try store.setJSON(Data(text.utf8), forKey: key, schemaVersion: schemaVersion)
      try store.close()
      try WrittenVersion(database: options.database, key: key, version: version).report(json: options.json)
      if let schemaVersion, let highest, highest > 0, schemaVersion > highest {
        // A mistyped schema version sticks: later sets of the key without the option record it too.
        Console.current.writeError(
          "Note: no other version in \(TerminalText.quoted(options.database)) has schema version "
            + "\(schemaVersion) (the highest is \(highest)); an application whose type is at an older "
            + "schema version cannot read this one, and later sets of key \(TerminalText.quoted(key)) "
            + "without --schema-version record \(schemaVersion) too.\n")
      }
    }
  }
}
