import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `inspect DB`: schema, journal mode, size, keys, versions and integrity of a store.
  struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Show the schema version, application, journal mode, size, keys, versions and integrity of a store.",
      discussion: """
        Exits with status 1, after the summary, when SQLite's quick check finds the file damaged: each \
        message it gave is on a line of its own under Integrity (`pld-tool verify` checks the values too).
        """)

    @OptionGroup var options: DatabaseOptions

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      defer { inspector.close() }
      let summary = try inspector.summary()
      let console = Console.current
      if options.json {
        console.writeJSON(Self.json(summary))
        if !summary.isIntegrityOK { throw ExitCode.failure }
        return
      }
      var lines: [(String, String)] = [
        ("File", TerminalText.escaped(summary.path)),
        (
          "Size",
          HumanFormat.size(summary.totalFileSize)
            + " (database \(HumanFormat.size(summary.fileSize)), WAL \(HumanFormat.size(summary.walSize)))"
        ),
        ("Schema version", "\(summary.schemaVersion)"),
        ("Application", summary.application.map { TerminalText.quoted($0) } ?? "none recorded"),
        ("Journal mode", TerminalText.escaped(summary.journalMode)),
        ("Page size", "\(summary.pageSize) bytes"),
        ("Keys", summary.keyCount.map { "\($0)" } ?? "not counted: a damaged page (see Integrity)"),
        ("Versions", summary.rowCount.map { "\($0)" } ?? "not counted: a damaged page (see Integrity)"),
        (
          "Integrity",
          summary.isIntegrityOK
            ? "ok"
            : (["damaged: SQLite's quick check says"] + Self.lines(of: summary.quickCheck)).joined(
              separator: "\n" + String(repeating: " ", count: 17))
        ),
      ]
      if summary.accessMode == .immutable {
        lines.append(("Opened", "immutable: the folder is not writable, so a -wal file is ignored"))
      }
      for (label, value) in lines {
        console.writeLine((label + ":").padding(toLength: 17) + value)
      }
      if !summary.isIntegrityOK { throw ExitCode.failure }
    }

    /// The quick check's messages, one line each: a message may hold several lines (each shown on its
    /// own, escaped for the terminal, never as a literal `\n`).
    static func lines(of messages: [String]) -> [String] {
      messages.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: true) }
        .map { "  " + TerminalText.escaped(String($0)) }
    }

    static func json(_ summary: StoreSummary) -> JSONValue {
      .object([
        .init("path", .string(summary.path)),
        .init("schemaVersion", .integer(summary.schemaVersion)),
        .init("journalMode", .string(summary.journalMode)),
        .init("pageSize", .integer(summary.pageSize)),
        .init("size", .integer(summary.totalFileSize)),
        .init("databaseSize", .integer(summary.fileSize)),
        .init("walSize", .integer(summary.walSize)),
        .init("keys", summary.keyCount.map { JSONValue.integer($0) } ?? .null),
        .init("versions", summary.rowCount.map { JSONValue.integer($0) } ?? .null),
        .init(
          "integrity",
          .object([
            .init("ok", .bool(summary.isIntegrityOK)),
            .init("messages", .array(summary.isIntegrityOK ? [] : summary.quickCheck.map(JSONValue.string))),
          ])),
        .init("access", .string(summary.accessMode == .immutable ? "immutable" : "readOnly")),
        .init("application", summary.application.map(JSONValue.string) ?? .null),
      ])
    }
  }
}

extension String {
  /// The string followed by spaces up to `length` characters (unchanged when longer).
  func padding(toLength length: Int) -> String {
    count >= length ? self + " " : self + String(repeating: " ", count: length - count)
  }
}
