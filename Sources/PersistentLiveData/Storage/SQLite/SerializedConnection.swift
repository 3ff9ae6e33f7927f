internal import Foundation

/// One SQLite connection, the state that goes with it, and the lock that serializes every use of both.
///
/// SQLite's own mutex serializes single calls, not transactions (the connection is opened with
/// `SQLITE_OPEN_NOMUTEX` anyway), so every `BEGIN … COMMIT` must run entirely under one lock: this type is
/// that lock and nothing else. The connection and `State` are reachable only inside ``sync(_:)``. The
/// lock is recursive for one reason: a transaction body runs inside ``sync(_:)`` on the caller's thread
/// and may write, which enters ``sync(_:)`` again.
///
/// After ``close(_:)``, ``sync(_:)`` throws ``Closed``.
///
/// ```swift
/// let serialized = SerializedConnection(connection, state: WriterState())
/// let count = try serialized.sync { connection, state in
///   try connection.scalarInt64("SELECT count(*) FROM pld_values")
/// }
/// ```
final class SerializedConnection<State: AnyObject>: @unchecked Sendable {
  /// Thrown by ``sync(_:)`` once the connection is closed.
  struct Closed: Error {}

  /// Guards `connection` and `state`: both are touched only while it is held.
  private let lock = NSRecursiveLock()
  private var connection: SQLiteConnection?
  private let state: State

  init(_ connection: SQLiteConnection, state: State) {
    self.connection = connection
    self.state = state
  }

  deinit {
    connection?.close()
  }

  /// Runs `body` with the connection and its state, holding the lock.
  ///
  /// - Throws: ``Closed`` after ``close(_:)``, or what `body` throws.
  func sync<Result>(_ body: (SQLiteConnection, State) throws -> Result) throws -> Result {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { throw Closed() }
    return try body(connection, state)
  }

  /// Runs `body` only if the connection is open; for background work that has nothing to do once closed.
  func syncIfOpen<Result>(_ body: (SQLiteConnection, State) -> Result?) -> Result? {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { return nil }
    return body(connection, state)
  }

  /// Runs `finish` with the state (e.g. to drop what it holds), then closes the connection. Idempotent:
  /// `finish` runs only on the first call.
  func close(_ finish: (State) -> Void = { _ in }) {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { return }
    finish(state)
    connection.close()
    self.connection = nil
  }
}
