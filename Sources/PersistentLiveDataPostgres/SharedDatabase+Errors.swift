import PersistentLiveDataBackend
import PostgresNIO

/// Errors: every call to the server runs under its deadline, and what the driver throws becomes a
/// ``SharedStoreError`` (the server's refusals keep their SQLSTATE).
extension SharedDatabase {
  /// Runs a call to the server under the operation timeout, turning driver errors into
  /// ``SharedStoreError``.
  ///
  /// With a connection probe (a store made from a configuration), a call that waits for the server is
  /// raced by the probe — at once while the server is not known to answer, after ``probeDelay``
  /// otherwise — and ends as soon as the probe's own connection fails, naming why.
  func bounded<Result: Sendable>(
    _ operation: String, timeout: Duration? = nil, _ body: @escaping @Sendable () async throws -> Result
  ) async throws -> Result {
    let failFast: (@Sendable () async -> (any Error)?)? = probe.map { probe in
      let delay = reachability.isReachable ? Self.probeDelay : .zero
      return { @Sendable in
        if delay > .zero {
          do { try await Task.sleep(for: delay) } catch { return nil }
        }
        return await probe.failure()
      }
    }
    do {
      let result = try await withDeadline(
        timeout ?? options.operationTimeout, operation: operation, failFast: failFast, body)
      reachability.record(reached: true)
      return result
    } catch let failure as ConnectFailure {
      reachability.record(reached: false, reason: failure.reason, refused: failure.isRefusal)
      throw failure.error(operation: operation)
    } catch {
      let translated = Self.translate(error, operation: operation)
      reachability.record(failure: translated)
      throw translated
    }
  }

  /// How long a call to a server that answered the last time runs before the probe looks for a
  /// connection failure beside it.
  static let probeDelay = Duration.milliseconds(100)

  static func translate(_ error: any Error, operation: String) -> any Error {
    switch error {
    case is SharedStoreError, is PersistentLiveDataError, is CancellationError: return error
    case let error as PSQLError: return translate(error, operation: operation)
    default:
      // The connection pool's errors: shut down, or no connection could be made in time.
      let text = "\(error)"
      let reason =
        text.contains("poolShutdown")
        ? "its PostgresClient is not running: run it (in a ServiceGroup, say) while the store is used" : text
      return SharedStoreError.serverUnavailable(operation: operation, reason: reason)
    }
  }

  private static func translate(_ error: PSQLError, operation: String) -> any Error {
    if error.code == .server, let state = error.serverInfo?[.sqlState] {
      let message = error.serverInfo?[.message] ?? "no message"
      // 08: connection exceptions; 57P01–57P03: the server is shutting down or starting up.
      if state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state) {
        return SharedStoreError.serverUnavailable(operation: operation, reason: "\(state): \(message)")
      }
      return SharedStoreError.server(operation: operation, code: state, message: message)
    }
    return SharedStoreError.serverUnavailable(operation: operation, reason: describe(error))
  }

  /// What a failed connection attempt says: the server's refusal (`28000: role "app" does not exist`),
  /// or why no connection could be made (`connection refused`, `no such file or directory`).
  static func describeConnectError(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return "could not connect: \(error)" }
    if let message = error.serverInfo?[.message] {
      return "\(error.serverInfo?[.sqlState] ?? "?"): \(message)"
    }
    if let underlying = error.underlying { return "could not connect: \(underlying)" }
    return "could not connect: \(error.code)"
  }

  /// A short description of a driver error: its code and, from the server, its message.
  static func describe(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return "\(error)" }
    if let message = error.serverInfo?[.message] {
      return "\(error.serverInfo?[.sqlState] ?? "?"): \(message)"
    }
    if let underlying = error.underlying { return "\(error.code): \(underlying)" }
    return "\(error.code)"
  }
}
