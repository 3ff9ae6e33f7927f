import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Reliability.InjectedFaults {
  /// Simulated power loss: the writer runs on the `pld_crashsim` VFS (Tests/Helpers/PLDCrashSim), which
  /// after a random number of writes and syncs reverts or tears, at random, the writes not yet synced and
  /// kills the process — what a disk cache that never reached stable storage leaves behind.
  ///
  /// - `.full`: zero acknowledged versions lost, zero corruption.
  /// - `.normal`: zero corruption; the last commits may be lost (counted, not failed) — the documented
  ///   price of `synchronous=NORMAL`.
  /// - Negative control: raw SQLite with `synchronous=OFF` on the same VFS must show loss or corruption
  ///   in some iterations; if it never does, the harness has stopped simulating anything.
  @Suite struct PowerLossTests {
    static let key = "power/record"

    struct Figures {
      var iterations = 0
      var lostAcknowledged = 0
      var mostVersionsLost: Int64 = 0
      var corruptions = 0
      var committedBeforeAck = 0
      var problems: [String] = []
    }

    /// Runs `iterations` simulated power losses of `mode` on a file continued from crash to crash; a
    /// file found damaged is replaced by a fresh one so that the loop goes on.
    func run(mode: String, durability: String, iterations: Int) throws -> Figures {
      let folder = try TemporaryDirectory("power")
      var generation = 0
      var path = folder.path("store-0.db")
      var restored: Int64 = 0
      var figures = Figures()
      if mode == "raw" { restored = try Self.writeSyncedBaseline(at: path) }
      for iteration in 0..<iterations {
        // The child checkpoints every 64 versions (and the control's runs last past an automatic
        // checkpoint), so power is also lost while the WAL is copied into the database file and restarted.
        let crashAfter = Int.random(in: mode == "raw" ? 1...6_000 : 1...400)
        let seed = UInt32.random(in: 0...UInt32.max)
        let arguments: [String]
        switch mode {
        case "raw": arguments = ["power-loss-raw", path, Self.key, String(crashAfter), String(seed)]
        case "async":
          arguments = [
            "power-loss-async", path, Self.key, durability, String(crashAfter), String(seed),
            String(Self.asyncWriters),
          ]
        default: arguments = ["power-loss", path, Self.key, durability, String(crashAfter), String(seed)]
        }
        // Acknowledgements of concurrent writers may come out of order, and up to one version per writer
        // may be committed before it is acknowledged.
        let slack: Int64 = mode == "async" ? Int64(Self.asyncWriters) : 1
        let child = try ChildProcess(ChildProcess.testChildPath, arguments)
        let lines = child.readAllLines()
        child.wait()
        figures.iterations += 1
        guard child.exitCode == 99 else {
          figures.problems.append(
            "iteration \(iteration): the child did not die in the power loss (status \(child.status)): "
              + "\(lines.suffix(2))")
          break
        }
        let acks = acknowledgedVersions(lines)
        let lastAck = acks.max() ?? restored
        let inspection = CrashInspection.inspect(
          path: path, key: Self.key, checkedBelow: restored, throughStore: mode != "raw",
          storeFirst: iteration % 2 == 0)
        let lost = inspection.latest < lastAck
        if lost {
          figures.lostAcknowledged += 1
          figures.mostVersionsLost = max(figures.mostVersionsLost, lastAck - inspection.latest)
        }
        if inspection.latest > lastAck { figures.committedBeforeAck += 1 }
        let beyondAck = inspection.latest > lastAck + slack
        if !inspection.isSound || beyondAck {
          figures.corruptions += 1
          if figures.problems.count < 5 {
            figures.problems.append(
              "iteration \(iteration) crashAfter \(crashAfter) seed \(seed): last ack \(lastAck): "
                + inspection.summary)
          }
          generation += 1
          path = folder.path("store-\(generation).db")
          restored = mode == "raw" ? try Self.writeSyncedBaseline(at: path) : 0
        } else {
          restored = inspection.latest
        }
      }
      return figures
    }

    /// For the negative control: a file whose table and first 20 versions are synced (written normally,
    /// before any simulated crash), so that a power loss can only damage what the child writes after —
    /// otherwise every crash would simply lose the whole unsynced file.
    static func writeSyncedBaseline(at path: String) throws -> Int64 {
      let connection = try SQLiteConnection(path: path, mode: .readWrite, create: true)
      defer { connection.close() }
      try connection.execute(
        """
        PRAGMA journal_mode = WAL;
        CREATE TABLE pld_values (key TEXT NOT NULL, version INTEGER NOT NULL,
          written_at INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (key, version)) WITHOUT ROWID;
        """)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      for version in Int64(1)...20 {
        let payload = try encoder.encode(CrashRecord(version: version))
        try connection.run(
          "INSERT INTO pld_values (key, version, written_at, payload) VALUES (?, ?, 0, ?)",
          [.text(key), .integer(version), .text(String(decoding: payload, as: UTF8.self))])
      }
      try connection.walCheckpoint(.truncate)
      return 20
    }

    static var iterations: Int {
      Reliability.iterations("PLD_POWERLOSS_ITERATIONS", default: 150, sanitized: 30)
    }

    @Test func fullDurabilityLosesNothingAcknowledgedAndNeverCorrupts() throws {
      let figures = try run(mode: "store", durability: "full", iterations: Self.iterations)
      report("full", figures)
      #expect(figures.problems.isEmpty, "\(figures.problems)")
      #expect(figures.lostAcknowledged == 0)
      #expect(figures.corruptions == 0)
    }

    /// Writers of the async mode: tasks calling `store.write { }` at once (group commit).
    static let asyncWriters = 4

    /// Group commit: four tasks calling `store.write { }` at once; a call returns only after its group's
    /// sync, so nothing acknowledged may be lost either.
    @Test func fullDurabilityWithConcurrentAsyncWritersLosesNothingAcknowledged() throws {
      let figures = try run(mode: "async", durability: "full", iterations: Self.iterations)
      report("full-async", figures)
      #expect(figures.problems.isEmpty, "\(figures.problems)")
      #expect(figures.lostAcknowledged == 0)
      #expect(figures.corruptions == 0)
    }

    @Test func normalDurabilityNeverCorruptsAndMayLoseOnlyTheLastCommits() throws {
      let figures = try run(mode: "store", durability: "normal", iterations: Self.iterations)
      report("normal", figures)
      #expect(figures.problems.isEmpty, "\(figures.problems)")
      #expect(figures.corruptions == 0)
    }

    /// A power loss at every step of a new store's creation, under several seeds (which unsynced writes
    /// are kept, dropped or torn), until the first write is acknowledged: the store opens every file left,
    /// with every acknowledged write. Among them, files whose first page never reached the disk: zeros next
    /// to the hot journal of an empty database (CI met one as "not an SQLite database"). The store must
    /// replay the journal through SQLite, which leaves an empty file, and the test must meet that case.
    @Test func aPowerLossAtEveryStepOfAStoresCreationLeavesAFileTheStoreOpens() throws {
      // Seeds 6, 7 and 12 tear or drop the first page at the sixth step (checked against the crash VFS).
      let seeds: [UInt32] = Reliability.underSanitizer ? [6, 7] : [6, 7, 12, 1, 2, 3]
      let folder = try TemporaryDirectory("power-create")
      var runs = 0
      var interruptedCreations = 0
      var problems: [String] = []
      var crashAfter = 0
      var creationCompleted = false
      while !creationCompleted && crashAfter < 200 {
        crashAfter += 1
        creationCompleted = true
        for seed in seeds {
          let path = folder.path("store-\(crashAfter)-\(seed).db")
          let child = try ChildProcess(
            ChildProcess.testChildPath,
            ["power-loss", path, Self.key, "full", String(crashAfter), String(seed)])
          let lines = child.readAllLines()
          child.wait()
          runs += 1
          guard child.exitCode == 99 else {
            problems.append(
              "crashAfter \(crashAfter) seed \(seed): no power loss (\(child.status)) \(lines.suffix(2))")
            continue
          }
          let lastAck = acknowledgedVersions(lines).max() ?? 0
          if lastAck == 0 { creationCompleted = false }
          var size: Int64 = 0
          if case .success(let status) = POSIX.linkStatus(path) { size = status.size }
          let interrupted = DatabaseFile.isInterruptedCreation(path: path, fileSize: size)
          if interrupted { interruptedCreations += 1 }
          let inspection = CrashInspection.inspect(path: path, key: Self.key, storeFirst: true)
          if !inspection.isSound || inspection.latest < lastAck || inspection.latest > lastAck + 1 {
            problems.append(
              "crashAfter \(crashAfter) seed \(seed) (last ack \(lastAck), interrupted creation: "
                + "\(interrupted)): \(inspection.summary)")
          } else if interrupted {
            // Replayed by the store's open: an empty store, its journal gone, which takes writes.
            let store = try PersistentStore(path: path)
            defer { try? store.close() }
            let record = try store.liveData(Self.key, default: CrashRecord(version: 0))
            try record.set(CrashRecord(version: 1))
            if record.version != 1 || FileManager.default.fileExists(atPath: path + "-journal") {
              problems.append(
                "crashAfter \(crashAfter) seed \(seed): after the replay, version \(record.version)")
            }
          }
        }
      }
      Reliability.figure(
        "power-loss creation steps=\(crashAfter) seeds=\(seeds.count) runs=\(runs) "
          + "interruptedCreations=\(interruptedCreations) problems=\(problems.count)")
      #expect(creationCompleted, "the creation took more than 200 steps")
      #expect(problems.isEmpty, "\(problems.prefix(5))")
      #expect(
        interruptedCreations > 0,
        "no run left a creation interrupted before its first page: the case is untested")
    }

    /// The harness must be able to fail: without any fsync, reverted writes lose acknowledged commits or
    /// damage the file.
    @Test func negativeControlWithoutSyncIsCaught() throws {
      let figures = try run(mode: "raw", durability: "off", iterations: max(20, Self.iterations / 3))
      report("raw-synchronous-off (negative control)", figures)
      #expect(
        figures.lostAcknowledged + figures.corruptions > 0,
        "the power-loss simulation detected nothing without fsync: it no longer simulates anything")
    }

    func report(_ label: String, _ figures: Figures) {
      Reliability.figure(
        "power-loss durability=\(label) iterations=\(figures.iterations) "
          + "lostAcknowledged=\(figures.lostAcknowledged) mostVersionsLost=\(figures.mostVersionsLost) "
          + "corruptions=\(figures.corruptions) committedBeforeAck=\(figures.committedBeforeAck)")
    }
  }
}
