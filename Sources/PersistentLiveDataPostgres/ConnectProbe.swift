import Logging
import PersistentLiveDataBackend
import PostgresNIO

/// Learns why the pool's connections cannot be made: one connection of its own, made as the pool makes
/// them, whose error names the cause.
///
/// postgres-nio's pool retries a connection that failed — a refused port, a missing socket, a role,
/// database or password the server refuses — with a backoff of its own and hands the error to nobody: a
/// call waits for a connection until its deadline. A store made from a configuration
/// (``PostgresStore/init(configuration:options:)``) runs this probe beside a call that waits: when the
/// probe's connection fails too, the call ends at once with
/// ``SharedStoreError/serverUnavailable(operation:reason:)`` naming the cause.
///
/// One attempt runs at a time, and callers that ask meanwhile share it. Its outcome is kept for a while,
/// so that a caller in a loop makes no loop of connections: a success for a second, a failure for a
/// backoff that doubles with each failure in a row: from 50 ms up to a second for a server that cannot
/// be reached, from one second up to ten for a refusal (authentication, role or database), which the
/// server would only refuse again.
///
/// ```swift
/// let probe = ConnectProbe(configuration: clientConfiguration)
/// if let failure = await probe?.failure() { logger.warning("\(failure.reason)") }
/// ```
final class ConnectProbe: Sendable {
  private struct State {
    var attempt: Task<ConnectFailure?, Never>?
    var outcome: (failure: ConnectFailure?, until: ContinuousClock.Instant)?
    var failuresInARow = 0
  }

  private let configuration: PostgresConnection.Configuration
  private let state = Locked(State())

  /// A probe for the connections of a client made from `configuration`; nil when its TLS settings
  /// cannot be read (the probe would then not connect as the pool does).
  init?(configuration: PostgresClient.Configuration) {
    // The TLS mode is not public; a probe is made only for connections without TLS (every Unix socket).
    guard let mode = Mirror(reflecting: configuration.tls).children.first?.value, "\(mode)" == "disable"
    else { return nil }
    var connection: PostgresConnection.Configuration
    if let path = configuration.unixSocketPath {
      connection = .init(
        unixSocketPath: path, username: configuration.username, password: configuration.password,
        database: configuration.database)
    } else if let host = configuration.host {
      connection = .init(
        host: host, port: configuration.port ?? 5432, username: configuration.username,
        password: configuration.password, database: configuration.database, tls: .disable)
    } else {
      return nil
    }
    connection.options.connectTimeout = .nanoseconds(
      configuration.options.connectTimeout.components.seconds * 1_000_000_000
        + configuration.options.connectTimeout.components.attoseconds / 1_000_000_000)
    connection.options.requireBackendKeyData = configuration.options.requireBackendKeyData
    connection.options.additionalStartupParameters = configuration.options.additionalStartupParameters
    self.configuration = connection
  }

  /// Why a connection cannot be made now; nil when one can (or the attempt did not end before the
  /// caller was cancelled).
  func failure() async -> ConnectFailure? {
    let now = ContinuousClock.now
    let attempt = state.withLock { state -> Task<ConnectFailure?, Never>? in
      if let outcome = state.outcome, now < outcome.until { return nil }
      if let running = state.attempt { return running }
      let created = Task { [configuration] in await Self.connect(configuration) }
      state.attempt = created
      return created
    }
    guard let attempt else { return state.withLock { $0.outcome?.failure } }
    // Not cancelled with this caller: the attempt goes on for the others, and ends within the
    // configuration's connect timeout.
    let failure = await attempt.value
    record(failure, of: attempt)
    return failure
  }

  /// Keeps the outcome of `attempt` (once, whichever caller comes first).
  private func record(_ failure: ConnectFailure?, of attempt: Task<ConnectFailure?, Never>) {
    state.withLock { state in
      guard state.attempt == attempt else { return }
      state.attempt = nil
      let now = ContinuousClock.now
      guard let failure else {
        state.failuresInARow = 0
        state.outcome = (nil, now + .seconds(1))
        return
      }
      state.failuresInARow += 1
      let (first, longest): (Duration, Duration) =
        failure.isRefusal ? (.seconds(1), .seconds(10)) : (.milliseconds(50), .seconds(1))
      let hold = min(first * (1 << min(state.failuresInARow - 1, 16)), longest)
      state.outcome = (failure, now + hold)
    }
  }

  private static func connect(_ configuration: PostgresConnection.Configuration) async -> ConnectFailure? {
    do {
      let connection = try await PostgresConnection.connect(
        on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 0,
        logger: SharedSchema.quiet)
      try? await connection.close()
      return nil
    } catch {
      return ConnectFailure(error)
    }
  }
}

/// Why a connection could not be made: the driver's error, and whether the server refused it (a role,
/// database or password it does not accept) rather than could not be reached.
///
/// ```swift
/// throw failure.error(operation: "read")   // SharedStoreError.serverUnavailable naming the cause
/// ```
struct ConnectFailure: Error, Sendable {
  let reason: String
  let isRefusal: Bool

  init(_ error: any Error) {
    reason = SharedDatabase.describeConnectError(error)
    if let error = error as? PSQLError, error.code == .server {
      let state = error.serverInfo?[.sqlState] ?? ""
      // 28: invalid authorization (a missing role, a wrong password); 3D000: no such database.
      isRefusal = state.hasPrefix("28") || state == "3D000"
    } else if let error = error as? PSQLError {
      isRefusal = [.unsupportedAuthMechanism, .authMechanismRequiresPassword].contains(error.code)
    } else {
      isRefusal = false
    }
  }

  /// The error a call that waited for a connection throws.
  func error(operation: String) -> SharedStoreError {
    .serverUnavailable(operation: operation, reason: reason)
  }
}
