import Foundation
public import PostgresNIO

extension PostgresTestServer {
  // Each of these waits for its processes (initdb, pg_ctl, psql) on a thread of its own, not on the
  // caller's: a synchronous wait in async code holds a thread of the cooperative pool, and on a machine with
  // two cores two such waits stall every task of the process — the replicas whose work the test waits for,
  // or the store transaction whose lock a psql statement waits on.

  /// ``shared()`` for async code: the first call starts the server without holding a thread of the
  /// cooperative pool.
  ///
  /// ```swift
  /// let server = try await PostgresTestServer.shared()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when no server can be started.
  public static func shared() async throws -> PostgresTestServer {
    try await offPool { try Self.shared() as PostgresTestServer }
  }

  /// ``start(durable:root:network:)`` for async code: `initdb` and `pg_ctl` run on a thread of their own.
  ///
  /// ```swift
  /// let server = try await PostgresTestServer.start()
  /// ```
  /// - Parameters:
  ///   - durable: Whether commits are flushed to disk (fsync on) as in production.
  ///   - root: The folder the server's temporary directory is made in; `/tmp` by default.
  ///   - network: A TCP port on 127.0.0.1 to listen on as well, with TLS when it names a certificate.
  /// - Throws: ``PostgresTestServerError`` naming the step that failed and what it printed.
  public static func start(
    durable: Bool = false, root: String? = nil, network: Network? = nil
  ) async throws -> PostgresTestServer {
    try await offPool { try start(durable: durable, root: root, network: network) as PostgresTestServer }
  }

  /// ``restart()`` for async code.
  ///
  /// ```swift
  /// try await server.restart()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when `pg_ctl` fails or the server is not owned.
  public func restart() async throws {
    try await Self.offPool { try self.restart() as Void }
  }

  /// ``halt()`` for async code.
  ///
  /// ```swift
  /// try await server.halt()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when `pg_ctl` fails or the server is not owned.
  public func halt() async throws {
    try await Self.offPool { try self.halt() as Void }
  }

  /// ``resume()`` for async code.
  ///
  /// ```swift
  /// try await server.resume()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when `pg_ctl` fails or the server is not owned.
  public func resume() async throws {
    try await Self.offPool { try self.resume() as Void }
  }

  /// ``stop()`` for async code. (A `defer` block cannot await: it calls the synchronous ``stop()``,
  /// which holds the calling thread while `pg_ctl` runs.)
  ///
  /// ```swift
  /// await server.stop()
  /// ```
  public func stop() async {
    _ = try? await Self.offPool { self.stop() as Void }
  }

  /// ``makeDatabase()`` for async code.
  ///
  /// ```swift
  /// let client = PostgresClient(configuration: try await server.makeDatabase())
  /// ```
  /// - Throws: ``PostgresTestServerError`` when psql fails.
  public func makeDatabase() async throws -> PostgresClient.Configuration {
    try await Self.offPool { try self.makeDatabase() as PostgresClient.Configuration }
  }

  /// ``psql(_:database:)`` for async code: psql runs, and is waited for, on a thread of its own.
  ///
  /// ```swift
  /// let count = try await server.psql("SELECT count(*) FROM pld_values", database: name)
  /// ```
  /// - Throws: ``PostgresTestServerError`` with what psql printed when it fails.
  @discardableResult
  public func psql(_ sql: String, database: String) async throws -> String {
    try await Self.offPool { try self.psql(sql, database: database) as String }
  }

  /// Runs blocking work on a new thread and resumes the caller when it is done.
  private static func offPool<Result: Sendable>(
    _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
    }
  }
}
