import Foundation
import PersistentLiveDataPostgresTesting
import Testing

/// Where a PostgreSQL server is required (CI sets `PLD_REQUIRE_POSTGRES=1`), the shared-store suites must
/// not be skipped: this fails instead.
@Suite struct ServerAvailabilityTests {
  static let required = ProcessInfo.processInfo.environment["PLD_REQUIRE_POSTGRES"] == "1"

  @Test(.enabled(if: required, "PLD_REQUIRE_POSTGRES is not set"))
  func aServerIsAvailableWhereOneIsRequired() async throws {
    #expect(PostgresTestServer.unavailableReason == nil, "\(PostgresTestServer.unavailableReason ?? "")")
    let server = try await PostgresTestServer.shared()
    #expect(
      try await server.psql("SELECT 1", database: "postgres").trimmingCharacters(in: .whitespacesAndNewlines)
        == "1"
    )
  }
}
