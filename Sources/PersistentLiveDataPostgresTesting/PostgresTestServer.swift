import Foundation
public import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server for tests, started from the local installation — no Docker.
///
/// ``start(durable:root:)`` runs `initdb` on a fresh temporary directory and starts the server on a Unix
/// socket in it (no TCP port, `fsync` off for speed unless `durable`); ``stop()`` (or the end of the
/// process) removes it all. When
/// the process runs as root, the server runs as the `postgres` user, which PostgreSQL requires. When
/// `PLD_POSTGRES_URL` is set (`postgres://user:password@host:port/database`), ``shared`` uses that
/// server instead and never restarts it.
///
/// ```swift
/// let server = try await PostgresTestServer.shared()
/// let configuration = try await server.makeDatabase()    // a new, empty database
/// let client = PostgresClient(configuration: configuration)
/// ```
///
/// Every method that runs a program (`initdb`, `pg_ctl`, `psql`) has an async form, chosen in async code:
/// it waits for the program on a thread of its own, where the synchronous form holds the calling thread —
/// in a test, one of the cooperative pool's, of which there are as many as cores.
public final class PostgresTestServer: Sendable {
  /// Where the server is reached.
  public enum Endpoint: Sendable {
    /// A Unix socket at this path.
    case socket(String)
    /// A TCP host and port.
    case host(String, Int)
  }

  /// How the server is reached.
  public let endpoint: Endpoint
  /// The role tests connect as.
  public let username: String
  /// Its password, if the server needs one.
  public let password: String?
  /// The cluster's directory; nil for a server given by `PLD_POSTGRES_URL`.
  public let dataDirectory: String?
  /// Whether this process started the server (and so may restart, stop and remove it).
  public var isOwned: Bool { dataDirectory != nil }
  /// Whether the server was started durable (`fsync`, `synchronous_commit` and `full_page_writes` on);
  /// false for a server given by `PLD_POSTGRES_URL`, whose settings are its own.
  public let isDurable: Bool

  private let binaries: String?
  private let root: String?
  private let maintenanceDatabase: String
  /// TCP (and TLS) besides the Unix socket; nil for the socket alone.
  let network: Network?
  private static let databaseCounter = CounterBox()

  private init(
    endpoint: Endpoint, username: String, password: String?, dataDirectory: String?, binaries: String?,
    root: String?, maintenanceDatabase: String, isDurable: Bool = false, network: Network? = nil
  ) {
    self.network = network
    self.isDurable = isDurable
    self.endpoint = endpoint
    self.username = username
    self.password = password
    self.dataDirectory = dataDirectory
    self.binaries = binaries
    self.root = root
    self.maintenanceDatabase = maintenanceDatabase
  }

  // MARK: Finding a server

  /// Why no server can be had here, or nil when one can (a local installation or `PLD_POSTGRES_URL`).
  ///
  /// ```swift
  /// @Suite(.enabled(if: PostgresTestServer.unavailableReason == nil)) struct SharedTests {}
  /// ```
  public static var unavailableReason: String? {
    if ProcessInfo.processInfo.environment["PLD_POSTGRES_URL"] != nil { return nil }
    if installedBinaries() != nil { return nil }
    return "no PostgreSQL server: install the postgresql package (initdb and pg_ctl in "
      + "/usr/lib/postgresql/VERSION/bin) or set PLD_POSTGRES_URL"
  }

  /// Whether a private server can be started (a local installation): tests that restart or stop the
  /// server need one.
  public static var canStartPrivateServers: Bool { installedBinaries() != nil }

  /// The server the tests of this process share: `PLD_POSTGRES_URL`, or one started at first use and
  /// removed when the process exits.
  ///
  /// ```swift
  /// let server = try PostgresTestServer.shared()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when no server can be started.
  public static func shared() throws -> PostgresTestServer {
    try sharedServer.get()
  }

  private static let sharedServer: Result<PostgresTestServer, any Error> = Result {
    if let url = ProcessInfo.processInfo.environment["PLD_POSTGRES_URL"] {
      return try fromURL(url)
    }
    return try start()
  }

  private static func fromURL(_ text: String) throws -> PostgresTestServer {
    guard let url = URLComponents(string: text), let host = url.host,
      url.scheme?.hasPrefix("postgres") == true
    else {
      throw PostgresTestServerError.failed(
        step: "PLD_POSTGRES_URL", output: "expected postgres://user:password@host:port/database, got \(text)")
    }
    let database = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    return PostgresTestServer(
      endpoint: .host(host, url.port ?? 5432), username: url.user ?? "postgres", password: url.password,
      dataDirectory: nil, binaries: nil, root: nil,
      maintenanceDatabase: database.isEmpty ? "postgres" : database)
  }

  /// The `bin` folder of the newest PostgreSQL installed under `/usr/lib/postgresql`.
  private static func installedBinaries() -> String? {
    let base = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
    return versions.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.reversed()
      .map { "\(base)/\($0)/bin" }
      .first { FileManager.default.isExecutableFile(atPath: "\($0)/pg_ctl") }
  }

  // MARK: A private server

  /// Starts a new server in a new temporary directory; it is removed by ``stop()`` or when the process
  /// exits.
  ///
  /// By default the server runs with `fsync` and `full_page_writes` off: fast, and nothing a test checks
  /// needs a commit to survive a crash of the machine. A `durable` server keeps PostgreSQL's defaults
  /// (`fsync`, `synchronous_commit` and `full_page_writes` on), so that every commit waits for its WAL
  /// flush as in production: what a benchmark of concurrent writers needs. Give it a `root` on the disk
  /// to measure (a tmpfs makes a flush free).
  ///
  /// ```swift
  /// let server = try PostgresTestServer.start()
  /// defer { server.stop() }
  /// try server.restart()
  /// let durable = try PostgresTestServer.start(durable: true, root: "/var/tmp")
  /// ```
  /// - Parameters:
  ///   - durable: Whether commits are flushed to disk (fsync on) as in production.
  ///   - root: The folder the server's temporary directory is made in; `/tmp` by default. Its path
  ///     plus 30 characters must fit a Unix socket path (107 bytes).
  ///   - network: A TCP port on 127.0.0.1 to listen on as well, with TLS when it names a certificate.
  /// - Throws: ``PostgresTestServerError`` naming the step that failed and what it printed.
  public static func start(
    durable: Bool = false, root: String? = nil, network: Network? = nil
  ) throws -> PostgresTestServer {
    guard let binaries = installedBinaries() else {
      throw PostgresTestServerError.failed(step: "find PostgreSQL", output: unavailableReason ?? "")
    }
    var template = Array("\(root ?? "/tmp")/pld-pg-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else {
      throw PostgresTestServerError.failed(step: "mkdtemp", output: String(cString: strerror(errno)))
    }
    let root = String(cString: created)
    let data = root + "/data"
    if geteuid() == 0 {
      guard let account = getpwnam("postgres") else {
        throw PostgresTestServerError.failed(step: "find the postgres user", output: "no such user")
      }
      chown(root, account.pointee.pw_uid, account.pointee.pw_gid)
    }
    let server = PostgresTestServer(
      endpoint: .socket("\(root)/.s.PGSQL.\(network?.port ?? 5432)"), username: "test", password: nil,
      dataDirectory: data, binaries: binaries, root: root, maintenanceDatabase: "postgres",
      isDurable: durable,
      network: network)
    Self.running.withLock { $0.append(server) }
    try server.run(
      "\(binaries)/initdb",
      ["-D", data, "-A", "trust", "-U", "test", "--no-sync", "--locale=C", "-E", "UTF8"],
      step: "initdb")
    try server.installCertificate()
    try server.startServer()
    return server
  }

  /// Restarts the server the way an operator would (`pg_ctl restart -m fast`): every connection drops.
  public func restart() throws {
    let (binaries, data, root) = try owned()
    try run(
      "\(binaries)/pg_ctl",
      ["-D", data, "-l", root + "/log", "-w", "-m", "fast", "-o", serverOptions(root), "restart"],
      step: "pg_ctl restart")
  }

  /// Stops the server at once (`pg_ctl stop -m immediate`), leaving its files for ``resume()``.
  public func halt() throws {
    let (binaries, data, _) = try owned()
    try run("\(binaries)/pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"], step: "pg_ctl stop")
  }

  /// Starts a server stopped by ``halt()`` again.
  public func resume() throws {
    try startServer()
  }

  /// Stops the server and removes its directory. Idempotent; also run when the process exits.
  public func stop() {
    guard let binaries, let dataDirectory, let root else { return }
    try? unsuspend()  // a frozen server would not hear the stop
    _ = try? run("\(binaries)/pg_ctl", ["-D", dataDirectory, "-w", "-m", "immediate", "stop"], step: "stop")
    try? FileManager.default.removeItem(atPath: root)
  }

  // MARK: Databases and SQL

  /// Creates a new, empty database and returns how to connect to it.
  ///
  /// ```swift
  /// let client = PostgresClient(configuration: try server.makeDatabase())
  /// ```
  public func makeDatabase() throws -> PostgresClient.Configuration {
    let name = "pld_test_\(getpid())_\(Self.databaseCounter.next())"
    try psql("CREATE DATABASE \(name)", database: maintenanceDatabase)
    return configuration(database: name)
  }

  /// How to connect to `database` on this server.
  public func configuration(database: String) -> PostgresClient.Configuration {
    var configuration: PostgresClient.Configuration
    switch endpoint {
    case .socket(let path):
      configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
    case .host(let host, let port):
      configuration = .init(
        host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }
    configuration.options.connectTimeout = .seconds(5)
    return configuration
  }

  /// Runs SQL with `psql` and returns what it printed (unaligned, tuples only).
  ///
  /// ```swift
  /// let count = try server.psql("SELECT count(*) FROM pld_values", database: name)
  /// ```
  @discardableResult
  public func psql(_ sql: String, database: String) throws -> String {
    var arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]
    switch endpoint {
    case .socket(let path):
      arguments += [
        "-h", (path as NSString).deletingLastPathComponent, "-p", "\(network?.port ?? 5432)", "-U", username,
        "-d",
        database,
      ]
    case .host(let host, let port):
      arguments += ["-h", host, "-p", "\(port)", "-U", username, "-d", database]
    }
    let program = binaries.map { "\($0)/psql" } ?? "/usr/bin/psql"
    return try run(program, arguments, step: "psql", asServerUser: false, password: password)
  }

  // MARK: Internals

  private static let running = LockedServers()

  func owned() throws -> (binaries: String, data: String, root: String) {
    guard let binaries, let dataDirectory, let root else {
      throw PostgresTestServerError.failed(
        step: "control", output: "the server was not started by this process")
    }
    return (binaries, dataDirectory, root)
  }

  private func serverOptions(_ root: String) -> String {
    let durability =
      isDurable
      ? "-c fsync=on -c synchronous_commit=on -c full_page_writes=on" : "-c fsync=off -c full_page_writes=off"
    return "-k \(root) \(networkOptions) \(durability) -c max_connections=400"
  }

  private func startServer() throws {
    let (binaries, data, root) = try owned()
    try run(
      "\(binaries)/pg_ctl", ["-D", data, "-l", root + "/log", "-w", "-o", serverOptions(root), "start"],
      step: "pg_ctl start")
  }

  @discardableResult
  private func run(
    _ program: String, _ arguments: [String], step: String, asServerUser: Bool = true, password: String? = nil
  ) throws -> String {
    let argv =
      asServerUser && geteuid() == 0
      ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments
      : [program] + arguments
    var environment = ProcessInfo.processInfo.environment
    if let password { environment["PGPASSWORD"] = password }
    // Output to a file, not a pipe: the server that `pg_ctl start` leaves running would hold a pipe open.
    let outputPath = NSTemporaryDirectory() + "pld-pg-output-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let status = try Self.spawnAndWait(argv, environment: environment, output: outputPath)
    let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    guard status == 0 else {
      throw PostgresTestServerError.failed(step: step, output: "exit status \(status): \(text)")
    }
    return text
  }

  /// Runs a program with posix_spawn and waits for it (Foundation's `Process` waits, on Linux, for
  /// every process that inherited its descriptors — the server `pg_ctl` starts lives on).
  private static func spawnAndWait(
    _ argv: [String], environment: [String: String], output: String
  ) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { arguments.forEach { free($0) } }
    let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
    defer { variables.forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, nil, arguments, variables)
    guard result == 0 else {
      throw PostgresTestServerError.failed(step: argv[0], output: String(cString: strerror(result)))
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS, which Swift does not import.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  }

  fileprivate static func stopAll() {
    for server in running.withLock({ $0 }) { server.stop() }
  }
}

/// Why a test server could not be started or used.
public enum PostgresTestServerError: Error, CustomStringConvertible {
  /// A step (initdb, pg_ctl, psql…) failed; `output` is what it printed.
  case failed(step: String, output: String)

  /// The step and its output.
  ///
  /// ```swift
  /// print(error.description)   // "PostgreSQL test server: initdb failed: …"
  /// ```
  public var description: String {
    switch self {
    case .failed(let step, let output): "PostgreSQL test server: \(step) failed: \(output)"
    }
  }
}

private final class CounterBox: Sendable {
  private let value = LockedServers.Box(0)
  func next() -> Int {
    value.withLock {
      $0 += 1; return $0
    }
  }
}

private final class LockedServers: Sendable {
  final class Box<State>: @unchecked Sendable {
    // Unchecked: `state` is only touched under `lock`.
    private var state: State
    private let lock = NSLock()
    init(_ state: State) { self.state = state }
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
      lock.lock()
      defer { lock.unlock() }
      return body(&state)
    }
  }

  private let servers = Box<[PostgresTestServer]>([])
  private let registered = Box(false)

  func withLock<Result>(_ body: (inout [PostgresTestServer]) -> Result) -> Result {
    let first = registered.withLock { flag -> Bool in
      defer { flag = true }
      return !flag
    }
    if first { atexit { PostgresTestServer.stopAll() } }
    return servers.withLock(body)
  }
}
