import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Reliability.Timed {
  /// The library and pld-tool give one answer to "is this file ours?" (StoreFileValidator): every case
  /// of the damaged-file corpus gets the same verdict from `PersistentStore(path:)`, from the
  /// `StoreInspector` pld-tool reads with, and from the built `pld-tool inspect` binary — and the reads
  /// leave the database and its `-wal` byte for byte as they were.
  ///
  /// The store runs `quick_check` when it opens a file (`verifiesIntegrityOnOpen`); pld-tool opens a
  /// damaged file anyway, so that it can still be inspected and exported, and `inspect` reports the
  /// damage in its integrity field: that report is pld-tool's `corrupt` verdict.
  @Suite struct StoreFileVerdictTests {
    static func options() -> StoreOptions {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      // These tests are about refusing a damaged file before use: the full check at open. (The default
      // open, which reads no page it does not need, is tested in LazyOpenTests.)
      options.verifiesIntegrityOnOpen = true
      return options
    }

    /// The bytes of the database, of its `-wal` (followed, if it is a link) and of its `-journal`. A
    /// missing `-wal` counts as an empty one: SQLite creates an empty `-wal` and a `-shm` when it reads a
    /// WAL database read-only (`sqlite3 -readonly` does the same), and a store's close removes an empty
    /// one; neither holds data.
    static func snapshot(_ path: String) -> [Data?] {
      [fileBytes(path), fileBytes(path + "-wal") ?? Data(), fileBytes(path + "-journal")]
    }

    /// The library's verdict: `opens` (every key listed), or the error case of the refusal, which must
    /// leave the files untouched.
    static func libraryVerdict(_ path: String) -> String {
      let before = snapshot(path)
      do {
        let store = try PersistentStore(path: path, options: options())
        defer { try? store.close() }
        _ = try store.keys()
        return "opens"
      } catch let error as PersistentLiveDataError {
        #expect(snapshot(path) == before, "the library modified a file it refused (\(error))")
        return error.caseName
      } catch {
        return "unexpected \(error)"
      }
    }

    /// The inspector's verdict and, for a refusal, the sentence pld-tool prints.
    static func inspectorVerdict(_ path: String) -> (verdict: String, message: String?) {
      do {
        let inspector = try StoreInspector(path: path)
        defer { inspector.close() }
        let summary = try inspector.summary()
        _ = try inspector.keyStatistics()
        return (summary.isIntegrityOK ? "opens" : "corrupt", nil)
      } catch let error as PersistentLiveDataError {
        return (error.caseName, error.description)
      } catch let error as InspectionError {
        return ("\(error)", error.description)
      } catch {
        return ("unexpected \(error)", nil)
      }
    }

    /// The verdict of `pld-tool inspect --json`, run as a user would: the integrity it reports, or the
    /// refusal, which must be the inspector's sentence.
    static func binaryVerdict(_ path: String, inspector: (verdict: String, message: String?)) throws -> String
    {
      let tool = ChildProcess.product("pld-tool")
      try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built with the tests")
      let run = try ChildProcess(tool, ["inspect", "--json", path], mergingStandardError: true)
      let output = run.readAllLines().joined(separator: "\n")
      run.wait()
      // The report, when it printed one: exit status 0 for a sound file, 1 for a damaged one.
      let document = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any]
      let ok = (document?["integrity"] as? [String: Any])?["ok"] as? Bool
      switch run.exitCode {
      case 0 where ok == true:
        return "opens"
      case 1 where ok == false:
        return "corrupt"
      case 1 where inspector.message.map({ "Error: \($0)" }) == output:
        return inspector.verdict
      case 1 where output == "Error: \"\(path)\" is an empty file, not a store.":
        return "emptyFile"
      default:
        return "unexpected: status \(String(describing: run.exitCode)), \(output)"
      }
    }

    @Test(arguments: DamagedFileCase.all)
    func libraryAndToolGiveTheSameVerdict(_ damaged: DamagedFileCase) throws {
      let folder = try TemporaryDirectory("verdict")
      let path = folder.path("store.db")
      try damaged.build(path)
      let before = Self.snapshot(path)

      // The read-only tools first: they must change nothing.
      let inspector = Self.inspectorVerdict(path)
      #expect(Self.snapshot(path) == before, "\(damaged): the inspector changed the file")
      let binary = try Self.binaryVerdict(path, inspector: inspector)
      #expect(Self.snapshot(path) == before, "\(damaged): pld-tool inspect changed the file")
      let library = Self.libraryVerdict(path)

      let readOnly = damaged.expectedReadOnly ?? damaged.expected
      #expect(library == damaged.expected, "\(damaged): library")
      #expect(inspector.verdict == readOnly, "\(damaged): inspector \(inspector.message ?? "")")
      #expect(binary == damaged.expectedTool ?? readOnly, "\(damaged): pld-tool inspect")
      Reliability.figure(
        "verdict \"\(damaged)\" library=\(library) tool=\(inspector.verdict) binary=\(binary)")
    }

    /// The corpus covers every verdict the validator can give a file.
    @Test func corpusCoversEveryVerdict() {
      let verdicts = Set(DamagedFileCase.all.flatMap { [$0.expected, $0.expectedReadOnly ?? $0.expected] })
      #expect(
        verdicts == [
          "opens", "notADatabase", "corrupt", "foreignDatabase", "schemaTooNew", "symbolicLink",
          "isADirectory", "cannotOpen",
        ])
    }
  }
}
