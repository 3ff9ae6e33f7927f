import Foundation
import Testing

@testable import PersistentLiveDataPostgres

/// `postgres://` URLs as `pld-tool --postgres` reads them: host or socket, libpq's `sslmode`
/// and `sslrootcert`, the password from `PGPASSWORD`, and never the password in what is printed.
struct PostgresURLTests {
  @Test func aURLNamesAHostOrASocket() throws {
    let socket = try PostgresURL("postgres://test@/app?host=/tmp/pg&port=54329", environment: [:])
    #expect(socket.socketPath == "/tmp/pg/.s.PGSQL.54329" && socket.host == nil && socket.user == "test")
    #expect(socket.database == "app" && socket.sslMode == .prefer)
    let host = try PostgresURL("postgresql://app:secret@db.internal:6543/state", environment: [:])
    #expect(host.host == "db.internal" && host.port == 6543 && host.password == "secret")
    #expect(host.database == "state" && host.socketPath == nil)
    let plain = try PostgresURL("postgres://app@db.internal", environment: [:])
    #expect(plain.port == 5432 && plain.database == nil && plain.password == nil)
    for bad in ["http://db/app", "postgres://db.internal/app", "not a url"] {
      #expect(throws: PostgresURLError.self) { try PostgresURL(bad, environment: [:]) }
    }
  }

  @Test func sslmodeAndSslrootcertAreLibpqs() throws {
    for mode in PostgresURL.SSLMode.allCases {
      let url = try PostgresURL(
        "postgres://app@db/app?sslmode=\(mode.rawValue)&sslrootcert=/ca.pem", environment: [:])
      #expect(url.sslMode == mode && url.sslRootCert == "/ca.pem")
    }
    let error = #expect(throws: PostgresURLError.self) {
      try PostgresURL("postgres://app@db/app?sslmode=verify", environment: [:])
    }
    #expect(error?.description.contains("verify-full") == true, "\(String(describing: error))")
    #expect(throws: PostgresURLError.self) {
      try PostgresURL("postgres://app@db/app?ssl=true", environment: [:])
    }
    // verify-ca and verify-full need root certificates: a file that is not there is said before connecting.
    let missing = #expect(throws: PostgresURLError.self) {
      try PostgresURL("postgres://app@db/app?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
        .configuration()
    }
    #expect(missing?.description.contains("/nonexistent/ca.pem") == true)
    // A Unix socket needs no TLS: it never leaves the machine.
    _ = try PostgresURL("postgres://app@/app?host=/tmp&sslmode=verify-full", environment: [:]).configuration()
  }

  @Test func thePasswordComesFromTheURLOrPGPASSWORDAndIsNeverPrinted() throws {
    let fromEnvironment = try PostgresURL("postgres://app@db/app", environment: ["PGPASSWORD": "hunter2"])
    #expect(fromEnvironment.password == "hunter2")
    let inURL = try PostgresURL("postgres://app:s3cret@db:6000/app?sslmode=require", environment: [:])
    #expect(inURL.redacted == "postgres://app@db:6000/app?sslmode=require")
    #expect(!inURL.redacted.contains("s3cret"))
    let error = #expect(throws: PostgresURLError.self) {
      try PostgresURL("postgres://app:s3cret@db/app?sslmode=bogus", environment: [:])
    }
    #expect(error.map { !$0.description.contains("s3cret") } == true)
    let malformed = #expect(throws: PostgresURLError.self) { try PostgresURL("postgres://:s3cret@db/app") }
    #expect(malformed.map { !$0.description.contains("s3cret") } == true, "\(String(describing: malformed))")
  }
}
