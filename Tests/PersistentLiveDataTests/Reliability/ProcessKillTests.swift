import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.Timed {
  /// SIGKILL at random points of a writing process: nothing acknowledged is lost, nothing is corrupted.
  ///
  /// A child (`pld-test-child records`) sets version 1, 2, 3 … of one key and prints "ack N" after each
  /// `set` returns. The test kills it at a random moment — mostly while it writes, sometimes while it is
  /// still opening or creating the file — then reads the file with raw SQL and with the library and
  /// checks: integrity ok; the newest version is the last acknowledged one or the one after (a commit
  /// can land before its acknowledgement is printed); every version holds the value written for it;
  /// versions are 1…N without gaps. A fresh file is started every 50 kills, so creation is killed too.
  @Suite struct ProcessKillTests {
    static let key = "crash/record"

    /// Writers of the async mode: tasks calling `store.write { }` at once (group commit).
    static let asyncWriters = 4

    /// `full` and `normal`: one thread calling `set`. `full-async`: four tasks calling `store.write { }` at
    /// once, so that groups of several calls commit together; their acknowledgements may come out of
    /// order, and up to four versions may land unacknowledged.
    @Test(arguments: ["full", "normal", "full-async"])
    func killedWriterLosesNothingAcknowledgedAndNeverCorrupts(durability mode: String) throws {
      let durability = mode == "full-async" ? "full" : mode
      let slack: Int64 = mode == "full-async" ? Int64(Self.asyncWriters) : 1
      let iterations = Reliability.iterations("PLD_CRASH_ITERATIONS", default: 300, sanitized: 50)
      let folder = try TemporaryDirectory("kill")
      var path = folder.path("store-0.db")
      var restored: Int64 = 0  // the newest version after the previous kill
      var landedUnacknowledged = 0
      var killedBeforeFirstAck = 0
      var acknowledged = 0
      var failures = 0
      var lost = 0
      var corrupt = 0
      let started = ContinuousClock.now

      for iteration in 0..<iterations {
        if iteration > 0 && iteration % 50 == 0 {
          path = folder.path("store-\(iteration / 50).db")
          restored = 0
        }
        let child = try ChildProcess(
          ChildProcess.testChildPath,
          mode == "full-async"
            ? ["records-async", path, Self.key, durability, String(Self.asyncWriters)]
            : ["records", path, Self.key, durability])
        var lines: [String] = []
        if Int.random(in: 0..<8) == 0 {
          // Anywhere, the start-up included: opening, creating the file, migrating.
          usleep(UInt32.random(in: 0...25_000))
        } else if let first = child.readLine() {
          lines.append(first)
          usleep(UInt32.random(in: 0...4_000))
        }
        child.kill(SIGKILL)
        child.wait()
        lines += child.readAllLines()
        if let error = lines.first(where: { $0.hasPrefix("error") }) {
          Issue.record("iteration \(iteration): the child failed on its own: \(error)")
          failures += 1
          break
        }
        #expect(child.terminatingSignal == SIGKILL, "iteration \(iteration): status \(child.status)")

        let acks = acknowledgedVersions(lines)
        acknowledged += acks.count
        if acks.isEmpty { killedBeforeFirstAck += 1 }
        let lastAck = acks.max() ?? restored
        let inspection = CrashInspection.inspect(
          path: path, key: Self.key, checkedBelow: restored, storeFirst: iteration % 2 == 0)
        let inRange = inspection.latest >= lastAck && inspection.latest <= lastAck + slack
        if inspection.latest < lastAck { lost += 1 }
        if !inspection.isSound { corrupt += 1 }
        if !inspection.isSound || !inRange {
          failures += 1
          Issue.record(
            "iteration \(iteration) (\(mode)): last ack \(lastAck): \(inspection.summary)")
          if failures >= 5 { break }
        }
        if inspection.latest > lastAck { landedUnacknowledged += 1 }
        restored = inspection.latest
      }

      if SQLiteCLI.isAvailable {
        // An independent reader (the sqlite3 shell) agrees on the last file.
        #expect(try SQLiteCLI.query(path, "PRAGMA integrity_check") == "ok")
        let count = try SQLiteCLI.query(path, "SELECT count(*) FROM pld_values")
        #expect(Int64(count) == restored)
      }
      let seconds = (ContinuousClock.now - started).components.seconds
      Reliability.figure(
        "kill durability=\(mode) iterations=\(iterations) acknowledged=\(acknowledged) "
          + "lostAcknowledged=\(lost) corruptions=\(corrupt) failures=\(failures) "
          + "committedBeforeAck=\(landedUnacknowledged) killedBeforeFirstAck=\(killedBeforeFirstAck) "
          + "seconds=\(seconds)")
    }
  }
}
