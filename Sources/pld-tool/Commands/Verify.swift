import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `verify DB`: integrity, JSON payloads and version gaps; exit 1 on any problem.
  struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Check SQLite integrity, that every payload is valid JSON nested at most 512 levels deep and that "
        + "versions have no gaps.",
      discussion: """
        Prints ok and exits 0 when all is well; lists the problems and exits 1 otherwise. Either way it \
        then lists the value schema versions stored per key (with how many versions have each); for a \
        store of more than \(keyLinesLimit) keys, how many keys and versions have each schema version, \
        and the keys that hold several (--json lists every key).
        """)

    /// Up to this many keys, the schema versions are listed key by key.
    static let keyLinesLimit = 20

    @OptionGroup var options: DatabaseOptions

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database, salvaging: true)
      defer { inspector.close() }
      let progress = Progress("verifying", total: 0)
      let report: VerificationReport
      do {
        report = try inspector.verify { done, total in progress.update(done: done, total: total) }
        progress.finish()
      } catch {
        progress.finish()
        throw error
      }
      let console = Console.current
      if options.json {
        console.writeJSON(Self.json(report))
      } else {
        if report.isOK {
          console.writeLine(
            "ok (\(HumanFormat.count(report.keyCount, "key")), \(HumanFormat.count(report.rowCount, "version")))"
          )
        } else {
          for problem in report.problems { console.writeLine(problem.description) }
          console.writeLine(
            "\(HumanFormat.count(report.problems.count, "problem")) found in \(TerminalText.quoted(options.database))."
          )
        }
        Self.schemaLines(report.schemaVersions).forEach(console.writeLine)
      }
      if !report.isOK { throw ExitCode.failure }
    }

    /// One line per key for a small store; for a larger one, one line per schema version, then the keys
    /// holding several schema versions (at most ``keyLinesLimit`` of them).
    ///
    /// ```
    /// schema version 1: 19998 keys, 20010 versions
    /// schema version 2: 2 keys, 54 versions
    /// keys holding several schema versions: 2
    /// schema versions of key "settings": 1 (4 versions), 2 (9 versions)
    /// ```
    static func schemaLines(_ keys: [KeySchemaVersions]) -> [String] {
      guard keys.count > keyLinesLimit else { return keys.map(schemaLine) }
      var keysOf: [Int: Int] = [:]
      var versionsOf: [Int: Int] = [:]
      for key in keys {
        for (schema, count) in key.versionCounts {
          keysOf[schema, default: 0] += 1
          versionsOf[schema, default: 0] += count
        }
      }
      var lines = keysOf.keys.sorted().map { schema in
        "schema version \(schema): \(HumanFormat.count(keysOf[schema] ?? 0, "key")), "
          + HumanFormat.count(versionsOf[schema] ?? 0, "version")
      }
      let mixed = keys.filter { $0.versionCounts.count > 1 }
      if !mixed.isEmpty {
        lines.append("keys holding several schema versions: \(mixed.count)")
        lines += mixed.prefix(keyLinesLimit).map(schemaLine)
        if mixed.count > keyLinesLimit {
          lines.append("… and \(mixed.count - keyLinesLimit) more (--json lists every key)")
        }
      }
      return lines
    }

    /// `schema versions of key "settings": 1 (4 versions), 2 (9 versions)`.
    static func schemaLine(_ key: KeySchemaVersions) -> String {
      let versions = key.schemaVersions.map { version in
        "\(version) (\(HumanFormat.count(key.versionCounts[version] ?? 0, "version")))"
      }
      return "schema versions of key \(TerminalText.key(key.key)): " + versions.joined(separator: ", ")
    }

    static func json(_ report: VerificationReport) -> JSONValue {
      .object([
        .init("ok", .bool(report.isOK)),
        .init("keys", .integer(report.keyCount)),
        .init("versions", .integer(report.rowCount)),
        .init("problems", .array(report.problems.map(json))),
        .init(
          "schemaVersions",
          .array(
            report.schemaVersions.map { key in
              .object([
                .init("key", .string(key.key)),
                .init(
                  "schemaVersions",
                  .array(
                    key.schemaVersions.map { version in
                      .object([
                        .init("schemaVersion", .integer(version)),
                        .init("versions", .integer(key.versionCounts[version] ?? 0)),
                      ])
                    })),
              ])
            })),
      ])
    }

    static func json(_ problem: VerificationProblem) -> JSONValue {
      var members: [JSONValue.Member]
      switch problem {
      case .integrity(let message):
        members = [.init("kind", .string("integrity")), .init("message", .string(message))]
      case .invalidJSON(let key, let version):
        members = [
          .init("kind", .string("invalidJSON")), .init("key", .string(key)),
          .init("version", .integer(version)),
        ]
      case .tooDeep(let key, let version, let depth):
        members = [
          .init("kind", .string("tooDeep")), .init("key", .string(key)),
          .init("version", .integer(version)), .init("depth", .integer(depth)),
        ]
      case .versionGap(let key, let missing):
        members = [
          .init("kind", .string("versionGap")), .init("key", .string(key)),
          .init("missingFrom", .integer(missing.lowerBound)),
          .init("missingTo", .integer(missing.upperBound)),
        ]
      }
      members.append(.init("description", .string(problem.description)))
      return .object(members)
    }
  }
}
