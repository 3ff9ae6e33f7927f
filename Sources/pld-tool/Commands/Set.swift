import ArgumentParser
import Foundation
import PersistentLiveData

extension PLDTool {
  /// `set DB KEY JSON`: writes a new version of a key.
  struct Set: ParsableCommand {
    /// What the store holds that decides the schema version a set records: the schema versions of the
    /// key's stored versions (how many of each), its current version and that version's schema version,
    /// and the highest schema version of any stored version (0 when the store holds none).
    struct StoredSchemaVersions {
      var ofKey: [Int: Int]
      var current: (version: Int64, schemaVersion: Int)?
      var highest: Int

      /// Reads them from `database` without writing; a file `--create` is about to make a store (nothing
      /// there, or an empty file) holds none.
      init(_ database: String, key: String) throws {
        let file = try? StoreFileValidator.checkFile(at: database, access: .readOnly)
        guard file != .missing, file != .empty else {
          (ofKey, current, highest) = ([:], nil, 0)
          return
        }
        let inspector = try StoreAccess.inspector(database)
        defer { inspector.close() }
        ofKey = try inspector.schemaVersionCounts(of: key)
        if ofKey.isEmpty {
          current = nil
        } else {
          let statistics = try inspector.keyStatistics(for: key)
          current = (statistics.currentVersion, statistics.schemaVersion)
        }
        highest = try inspector.highestSchemaVersion()
      }

      /// What a set without `--schema-version` records: the current version's (1 for a new key).
      var recorded: Int { current?.schemaVersion ?? 1 }
    }

    static let configuration = CommandConfiguration(
      abstract: "Write a new version of a key (the JSON is validated first).",
      discussion: """
        The value is written through the library, like an application's set: the next version number, \
        the library's JSON format, and running applications see it. The store must exist: a missing \
        database file, or an empty (0-byte) one, is an error, and nothing is created or changed, unless \
        --create is given (an empty file then becomes the store, with mode 0600). Pass - as JSON to read \
        the value from standard input. With --if-version N the write happens only if the key is still \
        at version N (0: only if it has none), checked in the write's own transaction, so that an edit \
        made from a value read earlier never overwrites a newer version.

        Every version records the value schema version of its JSON's shape. Without --schema-version, \
        the new version records that of the key's current version (1 for a new key), and: when the \
        key's stored versions have different schema versions, which shape the JSON has is ambiguous, \
        and set refuses to write without --schema-version; when other versions in the store have a \
        higher schema version than the one recorded, it writes and warns on standard error, naming the \
        schema version it recorded and --schema-version.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Argument(
      help: ArgumentHelp("The value as JSON, or - to read it from standard input.", valueName: "json"))
    var value: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        """
        The value schema version of the JSON's shape, at least 1 (default: the current version's; \
        required when the key's versions have different ones).
        """, valueName: "n"),
      transform: NumberArgument.parse(atLeast: 1))
    var schemaVersion: Int?

    @Option(
      name: .customLong("if-version"),
      parsing: .unconditional,
      help: ArgumentHelp(
        """
        Write only if the key is still at this version (0: only if it has none); otherwise exit 1, \
        naming both versions, with nothing written.
        """, valueName: "n"),
      transform: NumberArgument.parse(atLeast: 0))
    var ifVersion: Int64?

    @OptionGroup var creation: CreateOption

    @OptionGroup var attribution: AttributionOptions

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
      if let escape = Import.loneSurrogate(in: text[...]) {
        throw CommandError(
          "The value for key \(TerminalText.quoted(key)) has \(escape) without the other half of its "
            + "surrogate pair, which is no character (it would be stored as U+FFFD); nothing was written.")
      }
      if key.isEmpty { throw PersistentLiveDataError.invalidKey(key: key, reason: "a key cannot be empty") }
      // Decided before the store is opened: a refused set leaves the file as it was.
      let stored = try StoredSchemaVersions(options.database, key: key)
      if schemaVersion == nil, stored.ofKey.count > 1 { throw ambiguity(stored) }
      let store = try StoreAccess.store(options.database, ifMissing: creation.ifMissing)
      let version = try attribution.recording {
        try store.setJSON(Data(text.utf8), forKey: key, schemaVersion: schemaVersion, ifVersion: ifVersion)
      }
      try store.close()
      try WrittenVersion(database: options.database, key: key, version: version).report(json: options.json)
      let console = Console.current
      if let schemaVersion, stored.highest > 0, schemaVersion > stored.highest {
        // A mistyped schema version sticks: later sets of the key without the option record it too.
        console.writeError(
          "Note: no other version in \(TerminalText.quoted(options.database)) has schema version "
            + "\(schemaVersion) (the highest is \(stored.highest)); an application whose type is at an older "
            + "schema version cannot read this one, and later sets of key \(TerminalText.quoted(key)) "
            + "without --schema-version record \(schemaVersion) too.\n")
      } else if schemaVersion == nil, stored.highest > stored.recorded {
        let whose = stored.current == nil ? "a new key's" : "that of its current version"
        console.writeError(
          "Warning: version \(version) of key \(TerminalText.quoted(key)) records schema version "
            + "\(stored.recorded), \(whose), while other versions in \(TerminalText.quoted(options.database)) "
            + "have schema versions up to \(stored.highest). If the JSON has a newer shape, write it again "
            + "with --schema-version.\n")
      }
    }

    /// The error of a set without `--schema-version` on a key whose versions have several.
    private func ambiguity(_ stored: StoredSchemaVersions) -> CommandError {
      let versions = stored.ofKey.keys.sorted().map(String.init)
      let list = versions.dropLast().joined(separator: ", ") + " and " + (versions.last ?? "")
      let current =
        stored.current.map { " (its current version, \($0.version), has \($0.schemaVersion))" } ?? ""
      return CommandError(
        "The stored versions of key \(TerminalText.quoted(key)) have schema versions \(list)\(current), so "
          + "the shape of the JSON is ambiguous: pass --schema-version with its schema version. Nothing "
          + "was written.")
    }
  }
}
