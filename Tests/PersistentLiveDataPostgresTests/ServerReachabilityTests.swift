import CoreMetrics
import Foundation
import MetricsTestKit
import Testing

@testable import PersistentLiveDataPostgres

/// `pld.postgres.reachable` follows the last recorded outcome, also when calls record at once.
@Suite struct ServerReachabilityTests {
  @Test func theGaugeEndsOnTheLastOutcomeWhenTwoCallsRecordAtOnce() throws {
    let metrics = TestMetrics()
    let reachability = ServerReachability(
      gauge: Gauge(label: "pld.postgres.reachable", dimensions: [], factory: metrics))
    // Each round, two threads record opposite outcomes at the same moment; whichever came last in the
    // state must be the gauge's last value.
    var mismatches: [Int] = []
    for round in 0..<1_000 {
      let start = DispatchSemaphore(value: 0)
      let done = DispatchSemaphore(value: 0)
      for reached in [true, false] {
        Thread.detachNewThread {
          start.wait()
          reachability.record(reached: reached)
          done.signal()
        }
      }
      start.signal()
      start.signal()
      done.wait()
      done.wait()
      let gauge = try metrics.expectGauge("pld.postgres.reachable")
      if gauge.lastValue != (reachability.isReachable ? 1 : 0) { mismatches.append(round) }
    }
    #expect(mismatches.isEmpty, "the gauge disagreed with the last outcome in rounds \(mismatches)")
  }
}
