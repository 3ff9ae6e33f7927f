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
/// **Read windows.** Reads made through ``syncInReadWindow(_:)`` share one read transaction, left open
/// for reads that come within ``readWindowNanoseconds`` (1 ms) of its start, and ended before any other
/// use of the connection: a burst of such reads (an app creating a live value for each of its keys at
/// startup) pays SQLite's per-transaction locking and file checks once instead of once a read. Every
/// other entry — ``sync(_:)``, ``syncIfOpen(_:)``, ``close(_:)`` — ends the window first, so writes,
/// checks for other processes' commits and checkpoints never see it: they run exactly as without one.
/// A read in a window sees the file as it was when the window began, at most 1 ms before; a commit of
/// another process made in that millisecond is found by the next check for other processes' commits, as
/// one made just after the read would be.
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
  /// Whether a read transaction opened by ``syncInReadWindow(_:)`` is still open.
  private var isReadWindowOpen = false
  /// When the open read window began (`DispatchTime` uptime nanoseconds).
  private var readWindowStart: UInt64 = 0
  /// Where the timer that ends an idle read window runs. A serial queue of its own, served by a thread
  /// outside the pool of `DispatchQueue.global()`: ending a window takes the lock, which a long commit may
  /// hold for milliseconds, and on Linux that pool is the one Swift's cooperative executor runs tasks on
  /// (as many threads as cores). A timer blocked there held one of an app's two threads, and with a few
  /// stores open both: every task waited (the test suite's first 30–90 s of nothing, measured with gdb).
  private let readWindowTimer = DispatchQueue(label: "PersistentLiveData.read-window")

  /// The longest a read window serves reads, in nanoseconds (1 ms).
  static var readWindowNanoseconds: UInt64 { 1_000_000 }

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
    endReadWindow(connection)
    return try body(connection, state)
  }

  /// Runs the read-only `body` like ``sync(_:)``, inside the current read window, opening one if the
  /// connection is not in a transaction. Inside a write transaction it runs in that transaction.
  ///
  /// - Throws: ``Closed`` after ``close(_:)``, or what `body` throws (the window is then ended).
  func syncInReadWindow<Result>(_ body: (SQLiteConnection, State) throws -> Result) throws -> Result {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { throw Closed() }
    let now = DispatchTime.now().uptimeNanoseconds
    // A window serves reads for a bounded time, whenever its timer gets to run.
    if isReadWindowOpen, now &- readWindowStart > Self.readWindowNanoseconds { endReadWindow(connection) }
    if !isReadWindowOpen, !connection.isInTransaction, (try? connection.execute("BEGIN")) != nil {
      isReadWindowOpen = true
      readWindowStart = now
      // Releases the snapshot of a window nothing else ends (an idle store).
      let length = DispatchTimeInterval.nanoseconds(Int(Self.readWindowNanoseconds))
      readWindowTimer.asyncAfter(deadline: .now() + length) { [weak self] in self?.endReadWindow() }
    }
    do {
      return try body(connection, state)
    } catch {
      endReadWindow(connection)
      throw error
    }
  }

  /// Ends the read window, if one is open (from the timer that bounds it).
  private func endReadWindow() {
    lock.lock()
    defer { lock.unlock() }
    if let connection { endReadWindow(connection) }
  }

  /// Ends the read window, if one is open; the lock is held.
  private func endReadWindow(_ connection: SQLiteConnection) {
    guard isReadWindowOpen else { return }
    isReadWindowOpen = false
    // Ending a read transaction cannot fail for want of anything; if it did, the rollback ends it.
    if (try? connection.execute("COMMIT")) == nil { try? connection.execute("ROLLBACK") }
  }

  /// Whether the connection is open (a read window stays as it is).
  var isOpen: Bool {
    lock.lock()
    defer { lock.unlock() }
    return connection != nil
  }

  /// Runs `body` only if the connection is open; for background work that has nothing to do once closed.
  func syncIfOpen<Result>(_ body: (SQLiteConnection, State) -> Result?) -> Result? {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { return nil }
    endReadWindow(connection)
    return body(connection, state)
  }

  /// What ``syncIfAvailable(_:)`` found.
  enum Availability<Result> {
    case done(Result)
    case closed
    /// Another thread holds the lock.
    case busy
  }

  /// Runs `body` like ``syncIfOpen(_:)``, but only if the lock can be had at once; never waits for
  /// another thread.
  func syncIfAvailable<Result>(_ body: (SQLiteConnection, State) -> Result) -> Availability<Result> {
    guard lock.try() else { return .busy }
    defer { lock.unlock() }
    guard let connection else { return .closed }
    endReadWindow(connection)
    return .done(body(connection, state))
  }

  /// Reads the state only if the lock can be had at once — it is free, or this thread holds it already —
  /// and the connection is open; nil otherwise. Never waits for another thread.
  func stateIfAvailable<Result>(_ body: (State) -> Result) -> Result? {
    guard lock.try() else { return nil }
    defer { lock.unlock() }
    guard connection != nil else { return nil }
    return body(state)
  }

  /// Runs `finish` with the state (e.g. to drop what it holds), then closes the connection. Idempotent:
  /// `finish` runs only on the first call.
  func close(_ finish: (State) -> Void = { _ in }) {
    lock.lock()
    defer { lock.unlock() }
    guard let connection else { return }
    endReadWindow(connection)
    finish(state)
    connection.close()
    self.connection = nil
  }
}
