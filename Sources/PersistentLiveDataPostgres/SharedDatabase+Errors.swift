import PersistentLiveData
import PostgresNIO

/// Errors: every call to the server runs under its deadline, and what the driver throws becomes a
/// ``SharedStoreError`` (the server's refusals keep their SQLSTATE).
extension SharedDatabase {
  /// Runs a call to the server under the operation timeout, turning driver errors into
  /// ``SharedStoreError``.
  func bounded<Result: Sendable>(
    _ operation: String, timeout: Duration? = nil, _ body: @escaping @Sendable () async throws -> Result
  ) async throws -> Result {
    do {
      let result = try await withDeadline(timeout ?? options.operationTimeout, operation: operation, body)
      reachability.record(reached: true)
      return result
    } catch {
      let translated = Self.translate(error, operation: operation)
      reachability.record(failure: translated)
      throw translated
    }
  }

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
