import Foundation
import PLDTestSupport

extension ChildProcess {
  /// The helper program built with the tests, next to the test bundle.
  static var testChildPath: String {
    productsFolder.appendingPathComponent("pld-test-child").path
  }
}

/// The values the child program's `write` mode writes: its tag and a sequence number from 1.
struct Tagged: Codable, Sendable, Equatable {
  var tag: String
  var seq: Int
}
