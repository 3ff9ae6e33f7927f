import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `verify DB`: integrity, JSON payloads and version gaps; exit 1 on any problem.
  struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Check SQLite integrity, that every payload is valid JSON and that versions have no gaps.",
      discussion: "Prints ok and exits 0 when all is well; lists the problems and exits 1 otherwise.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
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
      } else if report.isOK {
        console.writeLine(
          "ok (\(HumanFormat.count(report.keyCount, "key")), \(HumanFormat.count(report.rowCount, "version")))"
        )
      } else {
        for problem in report.problems { console.writeLine(problem.description) }
        console.writeLine(
          "\(HumanFormat.count(report.problems.count, "problem")) found in \(TerminalText.quoted(options.database))."
        )
      }
      if !report.isOK { throw ExitCode.failure }
    }

    static func json(_ report: VerificationReport) -> JSONValue {
      .object([
        .init("ok", .bool(report.isOK)),
        .init("keys", .integer(report.keyCount)),
        .init("versions", .integer(report.rowCount)),
        .init("problems", .array(report.problems.map(json))),
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
