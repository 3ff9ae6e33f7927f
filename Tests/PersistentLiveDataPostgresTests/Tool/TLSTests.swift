import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import PostgresNIO
import Testing

extension ServerFaultSuites {
  /// `sslmode` and `sslrootcert` against real clusters the tests start: one with `ssl = on`
  /// and a certificate for `localhost` signed by a CA the test makes, one without TLS. `pg_stat_ssl`
  /// says whether a session is encrypted; every refusal says which rule refused, and no message holds
  /// the password.
  @Suite struct TLSTests {
    static let password = "s3cret-never-shown"

    @Test func aServerWithTLSIsEncryptedByDefaultAndCheckedAsEachModeSays() async throws {
      let certificates = try await TestCertificates.make()
      defer { certificates.remove() }
      let port = try Self.freePort()
      let network = PostgresTestServer.Network(
        port: port, certificate: certificates.serverCertificate, key: certificates.serverKey)
      try await withPrivateServer(network: network) { server in
        let base = "postgres://test:\(Self.password)@localhost:\(port)/postgres"
        let ca = "sslrootcert=\(certificates.ca)"
        for query in [
          "", "?sslmode=prefer", "?sslmode=require", "?sslmode=verify-ca&\(ca)", "?sslmode=verify-full&\(ca)",
        ] {
          #expect(try await PostgresURL(base + query).probe(), "encrypted with \(query)")
        }
        #expect(try await PostgresURL(base + "?sslmode=disable").probe() == false)
        // verify-ca checks the chain only: 127.0.0.1 is not a name the certificate holds, and it passes.
        let byAddress = "postgres://test:\(Self.password)@127.0.0.1:\(port)/postgres"
        #expect(try await PostgresURL(byAddress + "?sslmode=verify-ca&\(ca)").probe())

        let foreign = await #expect(throws: PostgresURLError.self) {
          try await PostgresURL(base + "?sslmode=verify-full&sslrootcert=\(certificates.foreignCA)").probe()
        }
        #expect(
          foreign?.description.contains("does not chain to the root certificates") == true,
          "\(foreign as Any)")
        let foreignCA = await #expect(throws: PostgresURLError.self) {
          try await PostgresURL(base + "?sslmode=verify-ca&sslrootcert=\(certificates.foreignCA)").probe()
        }
        #expect(foreignCA?.description.contains("does not chain") == true, "\(foreignCA as Any)")
        let otherName = await #expect(throws: PostgresURLError.self) {
          try await PostgresURL(byAddress + "?sslmode=verify-full&\(ca)").probe()
        }
        #expect(otherName?.description.contains("does not name the host") == true, "\(otherName as Any)")
        for error in [foreign, foreignCA, otherName] {
          #expect(error.map { !$0.description.contains(Self.password) } == true)
        }

        // A store on a client made from the URL: its sessions are encrypted, as the server sees them.
        let client = PostgresClient(
          configuration: try PostgresURL(base + "?sslmode=verify-full&\(ca)").configuration())
        let running = Task { await client.run() }
        let store = PostgresStore(client: client)
        let flags = try await store.liveData("flags", default: 0)
        try await flags.set(1)
        let sessions = try await server.psql(
          """
          SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
          WHERE a.client_addr IS NOT NULL AND a.datname = 'postgres'
          """, database: "postgres")
        let counts = sessions.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|")
        #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] != "0", "\(sessions)")
        running.cancel()

        // pld-tool serve, as a user starts it: says the session is encrypted, or which rule refused.
        let tool = ChildProcess.product("pld-tool")
        if FileManager.default.isExecutableFile(atPath: tool) {
          let inspector = try InspectorProcess(
            tool, url: base + "?sslmode=verify-full&\(ca)", allowWrites: false)
          #expect(try await inspector.keys()["flags"]?.version == 1)
          inspector.stop()
          #expect(
            inspector.child.standardError.contains("encrypted (TLS)"), "\(inspector.child.standardError)")
          #expect(!inspector.child.standardError.contains(Self.password))
          let refused = try ChildProcess(
            tool,
            ["serve", "--postgres", base + "?sslmode=verify-full&sslrootcert=\(certificates.foreignCA)"],
            mergingStandardError: true)
          let (lines, killed) = await refused.finish(within: .seconds(60))
          #expect(!killed && refused.exitCode == 1, "\(lines)")
          #expect(
            lines.joined().contains("does not chain") && !lines.joined().contains(Self.password), "\(lines)")
        }
      }
    }

    @Test func aServerWithoutTLSIsRefusedByRequireAndTheVerifyModes() async throws {
      let port = try Self.freePort()
      try await withPrivateServer(network: .init(port: port)) { (_: PostgresTestServer) async throws in
        let base = "postgres://test:\(Self.password)@localhost:\(port)/postgres"
        let preferred = try await PostgresURL(base).probe()
        #expect(!preferred, "prefer connects without TLS")
        let disabled = try await PostgresURL(base + "?sslmode=disable").probe()
        #expect(!disabled)
        for mode in ["require", "verify-ca", "verify-full"] {
          let refused = await #expect(throws: PostgresURLError.self) {
            try await PostgresURL(base + "?sslmode=\(mode)&sslrootcert=system").probe()
          }
          #expect(refused?.description.contains("does not offer TLS") == true, "\(mode): \(refused as Any)")
          #expect(refused.map { !$0.description.contains(Self.password) } == true)
        }
      }
    }

    /// A TCP port of 127.0.0.1 that nothing listens on now.
    static func freePort() throws -> Int {
      let listener = try SilentListener()
      defer { listener.close() }
      return listener.port
    }
  }
}
