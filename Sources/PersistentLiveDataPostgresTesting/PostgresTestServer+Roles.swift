import Foundation

extension PostgresTestServer {
  /// Creates a login role that must give `password` (SCRAM-SHA-256) on this server, whatever the server
  /// asks of other roles: its `pg_hba.conf` lines come first, and the configuration is reloaded. For
  /// tests of what a wrong password does; the role may create databases.
  ///
  /// ```swift
  /// try await server.addPasswordRole("app_with_password", password: "s3cret")
  /// var configuration = server.configuration(database: "postgres")
  /// configuration.username = "app_with_password"
  /// configuration.password = "wrong"          // refused: 28P01
  /// ```
  /// - Parameters:
  ///   - role: The new role's name (letters, digits and underscores).
  ///   - password: The password it must give.
  /// - Throws: ``PostgresTestServerError`` when the server is not owned, or psql or the file fails.
  public func addPasswordRole(_ role: String, password: String) async throws {
    let (_, data, _) = try owned()
    guard role.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
      !password.contains("'")
    else {
      throw PostgresTestServerError.failed(step: "add a role", output: "an unusable role name or password")
    }
    try await psql(
      "SET password_encryption = 'scram-sha-256'; "
        + "CREATE ROLE \(role) LOGIN CREATEDB PASSWORD '\(password)'",
      database: "postgres")
    let path = data + "/pg_hba.conf"
    let existing = try String(contentsOfFile: path, encoding: .utf8)
    let lines = "local all \(role) scram-sha-256\nhost all \(role) all scram-sha-256\n"
    // Written in place: the file keeps its owner (the server's account) and mode.
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data((lines + existing).utf8))
    // The postmaster reloads on the signal pg_reload_conf() sends it, a moment later: wait until it did.
    let loaded = try await psql("SELECT pg_conf_load_time()", database: "postgres")
    try await psql("SELECT pg_reload_conf()", database: "postgres")
    for _ in 0..<100 {
      if try await psql("SELECT pg_conf_load_time()", database: "postgres") != loaded { return }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw PostgresTestServerError.failed(
      step: "reload pg_hba.conf", output: "the configuration was not reloaded")
  }
}
