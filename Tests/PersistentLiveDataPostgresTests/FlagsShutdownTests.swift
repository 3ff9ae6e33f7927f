import Foundation
import PLDTestSupport
import PersistentLiveDataPostgresTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension ServerFaultSuites {
  /// `pld-flags` stops on SIGINT with exit status 0 in every state of its server — answering, stopped,
  /// halted (SIGSTOP) or refusing the role — with and without a local cache: a graceful shutdown is not an
  /// error, whatever the store was doing (preparing the schema, waiting for a connection).
  @Suite(
    .sharedStoreSlot,
    .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
  struct FlagsShutdownTests {
    @Test func exitsZeroOnSIGINTWhileTheServerIsStopped() async throws {
      let folder = try TemporaryDirectory("flags-stopped")
      defer { folder.remove() }
      // A socket path nothing listens on: a server that is stopped.
      let socket = folder.path(".s.PGSQL.5432")
      try await Self.expectCleanStops(folder, endpoint: socket, user: "test", database: "flags")
    }

    @Test func exitsZeroOnSIGINTWhileTheServerRefusesTheRoleAndLogsTheCause() async throws {
      let fixture = try await SharedFixture()
      let folder = try TemporaryDirectory("flags-refused")
      defer { folder.remove() }
      let role = "pld_flags_missing_role"
      let outputs = try await Self.expectCleanStops(
        folder, endpoint: FlagsShutdownTests.endpoint(fixture.server), user: role, database: fixture.database)
      for output in outputs {
        #expect(output.contains("role \"\(role)\" does not exist"), "the real cause is logged: \(output)")
        #expect(!output.contains("unreachable"), "\(output)")
      }
    }

    @Test(
      .enabled(if: PostgresTestServer.canStartPrivateServers, "needs a local PostgreSQL installation"))
    func exitsZeroOnSIGINTWhileTheServerIsHaltedAndWhileItAnswers() async throws {
      try await withPrivateServer { server in
        let fixture = try await SharedFixture(server: server)
        let folder = try TemporaryDirectory("flags-halted")
        defer { folder.remove() }
        // Answering: it serves, then stops.
        let answering = try await FlagsExampleTests.start(fixture)
        #expect(try await HTTP.request("GET", "/flags", port: answering.port).body == "{}")
        answering.process.kill(SIGINT)
        let (_, killed) = await answering.process.finish(within: sanitizerScaled(.seconds(10)))
        #expect(!killed && answering.process.exitCode == 0, "status \(answering.process.status)")

        try await FailureHelpers.blocking { try server.suspend() }
        do {
          try await Self.expectCleanStops(
            folder, endpoint: Self.endpoint(server), user: server.username, database: fixture.database)
        } catch {
          try? server.unsuspend()
          throw error
        }
        try await FailureHelpers.blocking { try server.unsuspend() }
      }
    }

    /// Starts `pld-flags` twice, without and with a cache, lets each try the server for a moment, sends
    /// SIGINT and expects exit status 0 within the bound; returns what each wrote to stderr.
    @discardableResult
    static func expectCleanStops(
      _ folder: TemporaryDirectory, endpoint: String, user: String, database: String
    ) async throws -> [String] {
      let environments = [[:], ["PLD_FLAGS_CACHE": folder.path("flags.cache")]]
      var children: [ChildProcess] = []
      for environment in environments {
        let child = try ChildProcess(
          ChildProcess.product("pld-flags"),
          [endpoint, user, database, "0"], environment: environment)
        children.append(child)
        let line = await child.readLineOffPool()
        #expect(line?.hasPrefix("listening on") == true, "\(line ?? "no output"): \(child.standardError)")
      }
      // Long enough for the store to be in its preparation: trying, failing, waiting to try again.
      try await Task.sleep(for: .milliseconds(500))
      var outputs: [String] = []
      for (child, environment) in zip(children, environments) {
        child.kill(SIGINT)
        let (_, killed) = await child.finish(within: sanitizerScaled(.seconds(10)))
        let output = child.standardError
        #expect(!killed, "stopped by SIGINT (\(environment)): \(output)")
        #expect(child.exitCode == 0, "exit status 0 (\(environment)), got \(child.status): \(output)")
        outputs.append(output)
      }
      return outputs
    }

    /// The server's socket, as pld-flags takes it.
    static func endpoint(_ server: PostgresTestServer) -> String {
      switch server.endpoint {
      case .socket(let path): path
      case .host(let host, let port): "\(host):\(port)"
      }
    }
  }
}

/// The suite under its short name, for the helpers of this file.
typealias FlagsShutdownTests = ServerFaultSuites.FlagsShutdownTests
