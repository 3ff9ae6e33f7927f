import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Reliability.Timed {
  /// `.normal` loses at most a stated window: the store syncs its WAL in the background
  /// (`StoreOptions.walSyncInterval`, 100 ms by default), so a simulated power loss may lose only the
  /// versions acknowledged in the last interval — plus a tolerance for the timer on a loaded machine.
  ///
  /// The child writes without checkpoints (which would sync too), and reports the time of each
  /// acknowledgement; the crash VFS reports the time power was lost, on the same clock.
  @Suite struct PowerLossWindowTests {
    static let key = "power/window"

    /// The promise (the default interval) and the tolerance the test allows on top of it: the timer's
    /// delay and the sync's own duration on a machine shared with the rest of the suite.
    static let window: Int64 = 100_000_000
    static var tolerance: Int64 { Reliability.underSanitizer ? 2_000_000_000 : 400_000_000 }

    static var iterations: Int {
      Reliability.iterations("PLD_POWERLOSS_WINDOW_ITERATIONS", default: 6, sanitized: 3)
    }

    struct Figures {
      var iterations = 0
      /// Iterations whose run was longer than window + tolerance: the assertion could fail there.
      var meaningful = 0
      var lostAcknowledged = 0
      /// The oldest lost acknowledgement, in ms before the power loss.
      var oldestLostMilliseconds: Int64 = 0
      var acknowledged = 0
      var problems: [String] = []
    }

    @Test func normalDurabilityLosesOnlyTheLastWindow() throws {
      let figures = try run(syncMilliseconds: Self.window / 1_000_000, iterations: Self.iterations)
      Reliability.figure(
        "power-loss-window durability=normal iterations=\(figures.iterations) meaningful=\(figures.meaningful) "
          + "acknowledged=\(figures.acknowledged) lostAcknowledged=\(figures.lostAcknowledged) "
          + "oldestLostMs=\(figures.oldestLostMilliseconds) windowMs=\(Self.window / 1_000_000) "
          + "toleranceMs=\(Self.tolerance / 1_000_000)")
      #expect(figures.problems.isEmpty, "\(figures.problems)")
      #expect(figures.meaningful > 0, "no run lasted longer than the window: the test checked nothing")
    }

    /// The control: without the background sync, SQLite's `synchronous=NORMAL` loses every commit since
    /// the last checkpoint (an automatic one comes every 1,000 WAL pages: seconds apart at this pace), so
    /// losses older than the window must appear — or the sync is not what bounds them, and the test above
    /// checks nothing. (Compared with the window itself, not with the tolerance: a loaded machine writes
    /// fewer versions and shortens the losses too.)
    @Test func withoutTheBackgroundSyncTheTestFails() throws {
      let figures = try run(syncMilliseconds: 0, iterations: Reliability.underSanitizer ? 3 : 5)
      Reliability.figure(
        "power-loss-window durability=normal-without-sync iterations=\(figures.iterations) "
          + "lostAcknowledged=\(figures.lostAcknowledged) oldestLostMs=\(figures.oldestLostMilliseconds)")
      #expect(
        figures.oldestLostMilliseconds * 1_000_000 > Self.window,
        "without the sync no acknowledgement older than the window was lost: the window test checks nothing")
    }

    func run(syncMilliseconds: Int64, iterations: Int) throws -> Figures {
      let folder = try TemporaryDirectory("power-window")
      var figures = Figures()
      for iteration in 0..<iterations {
        let path = folder.path("store-\(iteration).db")
        // Long enough runs (about 1.5–5 s of writes, some 200 a second: an app's pace, at which SQLite's
        // automatic checkpoint comes every few seconds) that a loss of everything since the last
        // checkpoint — the behaviour without the background sync — reaches far outside the window.
        let crashAfter = Int.random(in: 3_000...12_000)
        let seed = UInt32.random(in: 0...UInt32.max)
        let child = try ChildProcess(
          ChildProcess.testChildPath,
          ["power-loss-timed", path, Self.key, String(crashAfter), String(seed), String(syncMilliseconds)])
        let lines = child.readAllLines()
        child.wait()
        figures.iterations += 1
        let acks: [(version: Int64, at: Int64)] = lines.compactMap { line in
          let parts = line.split(separator: " ")
          guard parts.count == 3, parts[0] == "ackt", let version = Int64(parts[1]), let at = Int64(parts[2])
          else { return nil }
          return (version, at)
        }
        guard child.exitCode == 99, let crash = lines.last(where: { $0.hasPrefix("crash ") }),
          let crashedAt = Int64(crash.dropFirst(6)), let first = acks.first
        else {
          figures.problems.append(
            "iteration \(iteration): no power loss (status \(child.status)): \(lines.suffix(2))")
          break
        }
        figures.acknowledged += acks.count
        let inspection = CrashInspection.inspect(
          path: path, key: Self.key, checkedBelow: 0, throughStore: true, storeFirst: iteration % 2 == 0)
        guard inspection.isSound else {
          figures.problems.append("iteration \(iteration) seed \(seed): \(inspection.summary)")
          continue
        }
        let threshold = crashedAt - Self.window - Self.tolerance
        if first.at < threshold { figures.meaningful += 1 }
        let lost = acks.filter { $0.version > inspection.latest }
        if let oldest = lost.first {
          figures.lostAcknowledged += lost.count
          figures.oldestLostMilliseconds = max(
            figures.oldestLostMilliseconds, (crashedAt - oldest.at) / 1_000_000)
          if oldest.at < threshold {
            figures.problems.append(
              "iteration \(iteration) seed \(seed): version \(oldest.version), acknowledged "
                + "\((crashedAt - oldest.at) / 1_000_000) ms before the power loss, was lost "
                + "(\(acks.count) acknowledged, \(inspection.latest) recovered)")
          }
        }
      }
      return figures
    }
  }
}
