import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.Timed {
  /// Damaged files beyond Store/FileValidationTests (text, random bytes, short, empty, truncated, one
  /// garbage page, newer schema): zeroed pages, random pages over many seeds, each header field, and a
  /// `-wal` that belongs to another database. Each gives a typed error — or opens with its data intact,
  /// where the damage is invisible to SQLite — never a crash, never a silent reset; a refused file is left
  /// byte for byte, WAL included.
  @Suite struct DamagedFileTests {
    static let key = "damaged/value"

    static func options() -> StoreOptions {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      // These tests are about refusing a damaged file before use: the full check at open. (The default
      // open, which reads no page it does not need, is tested in LazyOpenTests.)
      options.verifiesIntegrityOnOpen = true
      return options
    }

    /// A closed store of about 60 pages: 200 versions of one key and 50 other keys.
    static func writeStore(at path: String) throws {
      let store = try PersistentStore(path: path, options: options())
      let value = try store.liveData(key, default: "")
      let others = try (0..<50).map { try store.liveData("other-\($0)", default: 0) }
      try store.transaction {
        for round in 1...200 { try value.set("round \(round) " + String(repeating: "•", count: 300)) }
        for (index, other) in others.enumerated() { try other.set(index) }
      }
      try store.close()
    }

    /// The number (from 1) of the last leaf page of `pld_values` in the database file at `path` (the
    /// change log's pages come after it), read with the sqlite3 shell: call it while no `-wal` exists.
    static func lastLeafPageOfValues(_ path: String) throws -> Int {
      try #require(SQLiteCLI.isAvailable, "the sqlite3 shell finds the page")
      let sql = "SELECT max(pageno) FROM dbstat WHERE name = 'pld_values' AND pagetype = 'leaf'"
      return try #require(Int(try SQLiteCLI.query(path, sql)))
    }

    static func pageSize(_ bytes: Data) -> Int {
      let raw = Int(bytes[16]) << 8 | Int(bytes[17])
      return raw == 1 ? 65_536 : raw
    }

    enum Outcome: Equatable, CustomStringConvertible {
      case refused(String)
      /// Opened; the key restored at this version (200 when the damage missed it).
      case opened(version: Int64)
      case failedAfterOpening(String)

      var description: String {
        switch self {
        case .refused(let name): "refused: \(name)"
        case .opened(let version): "opened at version \(version)"
        case .failedAfterOpening(let name): "opened, then \(name)"
        }
      }
    }

    /// Opens the damaged store and reads every key; the files must be unchanged if it was refused.
    static func open(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
      let files = [path, path + "-wal"]
      let before = files.map(fileBytes)
      let store: PersistentStore
      do {
        store = try PersistentStore(path: path, options: options())
      } catch let error as PersistentLiveDataError {
        #expect(files.map(fileBytes) == before, "a refused file was modified", sourceLocation: sourceLocation)
        return .refused(error.caseName)
      } catch {
        Issue.record("not a PersistentLiveDataError: \(error)", sourceLocation: sourceLocation)
        return .refused("\(type(of: error))")
      }
      defer { try? store.close() }
      do {
        let value = try store.liveData(key, default: "")
        for key in try store.keys() where key != Self.key { _ = try store.liveData(key, default: 0) }
        _ = try value.history()
        return .opened(version: value.version)
      } catch let error as PersistentLiveDataError {
        return .failedAfterOpening(error.caseName)
      } catch {
        Issue.record("not a PersistentLiveDataError: \(error)", sourceLocation: sourceLocation)
        return .failedAfterOpening("\(type(of: error))")
      }
    }

    @Test func zeroedPagesAreRefused() throws {
      let folder = try TemporaryDirectory("damaged")
      let pristine = folder.path("pristine.db")
      try Self.writeStore(at: pristine)
      let bytes = try #require(fileBytes(pristine))
      let pageSize = Self.pageSize(bytes)
      let pages = bytes.count / pageSize
      var outcomes: [Int: Outcome] = [:]
      for page in [0, 1, 2, pages / 2, pages - 1] {
        let path = folder.path("zeroed-\(page).db")
        var damaged = bytes
        damaged.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: Data(count: pageSize))
        try writeFile(path, damaged)
        let outcome = Self.open(path)
        outcomes[page + 1] = outcome
        #expect(outcome != .opened(version: 0), "page \(page + 1): a silent reset")
        if case .opened = outcome { Issue.record("page \(page + 1) of \(pages) zeroed, yet it opened") }
      }
      Reliability.figure("damaged zeroed-pages outcomes=\(outcomes.sorted { $0.key < $1.key })")
    }

    /// Random pages overwritten with random bytes, 40 seeds: refused, or (damage inside a value that
    /// keeps the b-tree valid) opened with the value undecodable — never a crash or a silent reset.
    @Test func randomPagesNeverCrashOrReset() throws {
      let folder = try TemporaryDirectory("damaged")
      let pristine = folder.path("pristine.db")
      try Self.writeStore(at: pristine)
      let bytes = try #require(fileBytes(pristine))
      let pageSize = Self.pageSize(bytes)
      let pages = bytes.count / pageSize
      var tally: [String: Int] = [:]
      for seed in UInt64(1)...40 {
        var damaged = bytes
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
          let page = Int.random(in: 1..<pages, using: &generator)  // page 1 (the header) has its own test
          let garbage = pseudoRandomBytes(count: pageSize, seed: generator.next())
          damaged.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: garbage)
        }
        let path = folder.path("random-\(seed).db")
        try writeFile(path, damaged)
        let outcome = Self.open(path)
        #expect(outcome != .opened(version: 0), "seed \(seed): a silent reset")
        let label: String
        switch outcome {
        case .refused(let name): label = "refused \(name)"
        case .opened: label = "opened"
        case .failedAfterOpening(let name): label = "failed after opening \(name)"
        }
        tally[label, default: 0] += 1
      }
      Reliability.figure("damaged random-pages seeds=40 outcomes=\(tally.sorted { $0.key < $1.key })")
    }

    /// Each field of the 100-byte header set to an impossible or foreign value.
    @Test func damagedHeaderFieldsAreRefusedOrHarmless() throws {
      let folder = try TemporaryDirectory("damaged")
      let pristine = folder.path("pristine.db")
      try Self.writeStore(at: pristine)
      let bytes = try #require(fileBytes(pristine))
      let mutations: [(String, Int, [UInt8])] = [
        ("magic", 0, Array("SQLite format 4".utf8)),
        ("page size 3000", 16, [0x0B, 0xB8]),
        ("page size 256", 16, [0x01, 0x00]),
        ("write version 9", 18, [9]),
        ("read version 9", 19, [9]),
        ("reserved bytes 200", 20, [200]),
        ("payload fractions", 21, [1, 1, 1]),
        ("size in pages x100", 28, [0, 0, 0x10, 0]),
        ("first freelist page", 32, [0, 0, 0x7F, 0xFF]),
        ("schema format 9", 44, [0, 0, 0, 9]),
        ("text encoding UTF-16", 56, [0, 0, 0, 2]),
        ("text encoding 7", 56, [0, 0, 0, 7]),
        ("application id", 68, [0, 0, 0, 1]),
        ("whole header zeroed", 0, [UInt8](repeating: 0, count: 100)),
      ]
      var outcomes: [String] = []
      for (name, offset, replacement) in mutations {
        var damaged = bytes
        damaged.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        let path = folder.path("header-\(outcomes.count).db")
        try writeFile(path, damaged)
        let outcome = Self.open(path)
        outcomes.append("\(name): \(outcome)")
        if case .opened(let version) = outcome {
          #expect(version == 200, "\(name): opened but lost the data (\(version))")
          // SQLite treats a write version above 2 as read-only: writes are refused, the file kept.
          let store = try PersistentStore(path: path, options: Self.options())
          expectStoreError("readOnly", "\(name)") { try store.liveData(Self.key, default: "").set("new") }
          try store.close()
          #expect(fileBytes(path) == damaged, "\(name): the file was modified")
        }
      }
      Reliability.figure("damaged header outcomes=\(outcomes)")
    }

    /// A damaged database whose WAL holds commits not yet checkpointed (a writer was killed): refused,
    /// and neither file is touched — closing the refused connection must not checkpoint the WAL into the
    /// damaged file and delete it, which would destroy what a recovery tool needs.
    @Test func damagedDatabaseWithAHotWALIsRefusedWithBothFilesLeft() throws {
      let folder = try TemporaryDirectory("damaged")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      // The last leaf page of the versions (the "other-…" keys), found before the WAL exists.
      let page = try Self.lastLeafPageOfValues(path)
      let child = try ChildProcess(ChildProcess.testChildPath, ["records", path, "crash/record", "full"])
      while let line = child.readLine(), (acknowledgedVersions([line]).first ?? 0) < 5 {}
      child.kill(SIGKILL)
      child.wait()
      let walBefore = try #require(fileBytes(path + "-wal"), "the killed writer should leave a WAL")
      #expect(!walBefore.isEmpty)
      // Garbage in that page, which the killed writer's commits did not touch.
      let bytes = try #require(fileBytes(path))
      let pageSize = Self.pageSize(bytes)
      try overwriteBytes(path, at: (page - 1) * pageSize + 8, count: pageSize - 8)
      let outcome = Self.open(path)  // checks that a refusal leaves database and WAL byte for byte
      #expect(outcome == .refused("corrupt"), "\(outcome)")
      #expect(fileBytes(path + "-wal") == walBefore, "the WAL was checkpointed or deleted")
    }

    /// A `-wal` from another store next to a database (what a restore of the database alone from a backup
    /// leaves behind): SQLite cannot tell whose WAL it is. The result must be refused with the files left as
    /// they were, or open consistently — never a crash.
    @Test func walOfAnotherDatabaseIsRefusedWithBothFilesLeftOrOpensConsistently() throws {
      let folder = try TemporaryDirectory("damaged")
      // B: a checkpointed store of 200 versions; A: another store's hot WAL, left by a killed writer.
      let target = folder.path("b.db")
      try Self.writeStore(at: target)
      let other = folder.path("a.db")
      let child = try ChildProcess(ChildProcess.testChildPath, ["records", other, Self.key, "full"])
      while let line = child.readLine(), (acknowledgedVersions([line]).first ?? 0) < 60 {}
      child.kill(SIGKILL)
      child.wait()
      try FileManager.default.copyItem(atPath: other + "-wal", toPath: target + "-wal")
      let outcome = Self.open(target)
      Reliability.figure("damaged foreign-wal outcome=\(outcome)")
      if case .opened(let version) = outcome {
        // SQLite applied the foreign frames; the result must at least be a sound database.
        let inspection = try SQLiteConnection(path: target, mode: .readWrite)
        defer { inspection.close() }
        #expect(try inspection.scalarText("PRAGMA integrity_check") == "ok", "opened at \(version)")
      }
    }
  }
}

/// A small deterministic generator (SplitMix64) for reproducible damage.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
