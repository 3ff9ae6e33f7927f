import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `diff DB KEY V1 V2`: what changed between two versions, path by path.
  struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show what changed between two versions of a key, path by path.",
      discussion: """
        Each line is a JSON path with "+" (added), "-" (removed) or "~" (changed, old → new). \
        With --json: a list of {"path", "change", "old", "new"} ("old" is absent for an added path, \
        "new" for a removed one).
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key.")
    var key: String

    @Argument(help: "The older version (at least 1).", transform: NumberArgument.parse(atLeast: 1))
    var from: Int64

    @Argument(help: "The newer version (at least 1).", transform: NumberArgument.parse(atLeast: 1))
    var to: Int64

    func validate() throws {
      if from < 1 { throw ValidationError("<from> must be at least 1.") }
      if to < 1 { throw ValidationError("<to> must be at least 1.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let old = try value(inspector, version: from)
      let new = try value(inspector, version: to)
      let changes = JSONDiff.changes(from: old, to: new)
      let console = Console.current
      if options.json {
        console.writeJSON(.array(changes.map(Self.json)))
        return
      }
      console.writeLine("key \(TerminalText.key(key)): version \(from) → version \(to)")
      guard !changes.isEmpty else {
        console.writeLine("no differences")
        return
      }
      for change in changes { console.writeLine(Self.line(change)) }
      console.writeLine(HumanFormat.count(changes.count, "change"))
    }

    private func value(_ inspector: StoreInspector, version: Int64) throws -> JSONValue {
      let row = try inspector.row(key: key, version: version)
      let output = RowOutput(row)
      if let error = output.unshowable(database: options.database) { throw error }
      guard let value = output.value else {
        throw InspectionError.invalidPayload(path: options.database, key: key, version: version)
      }
      return value
    }

    /// The line printed for one change: `+ PATH: NEW`, `- PATH: OLD` or `~ PATH: OLD → NEW` (the path's
    /// control characters escaped).
    static func line(_ change: JSONDiff.Change) -> String {
      let path = TerminalText.escaped(change.path)
      switch change.kind {
      case .added: return "+ \(path): \(change.new?.compact ?? "")"
      case .removed: return "- \(path): \(change.old?.compact ?? "")"
      case .changed: return "~ \(path): \(change.old?.compact ?? "") → \(change.new?.compact ?? "")"
      }
    }

    static func json(_ change: JSONDiff.Change) -> JSONValue {
      var members: [JSONValue.Member] = [
        .init("path", .string(change.path)), .init("change", .string(change.kind.rawValue)),
      ]
      if let old = change.old { members.append(.init("old", old)) }
      if let new = change.new { members.append(.init("new", new)) }
      return .object(members)
    }
  }
}
