import Foundation
import PLDTestSupport

extension ChildProcess {
  /// The replica program built with the tests, next to the test bundle.
  static var postgresChildPath: String {
    productsFolder.appendingPathComponent("pld-postgres-child").path
  }
}
