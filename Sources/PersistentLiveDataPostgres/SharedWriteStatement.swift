import PersistentLiveDataBackend
import PostgresNIO

/// A write as a prepared statement: each connection parses and plans each of the six shapes of
/// ``SharedStatements/writeSQL(head:pruning:)`` once, then only binds and executes it.
///
/// Sent as a query, the statement was parsed, analysed and planned again on every write: on a durable
/// server with replicas writing at once, that was most of the backend's work per write besides the
/// commit. PostgreSQL re-plans a prepared statement by itself when the tables it reads change (a
/// migration), and the driver prepares it again on a new connection.
///
/// ```swift
/// let version = try await SharedWriteStatement.run(write, retention: .all, on: client)
/// ```
enum SharedWriteStatement {
  /// Runs `write` on `runner` — prepared, or as a plain query when `prepared` is false
  /// (``PostgresStoreOptions/preparesStatements``); returns its version and `written_at` in
  /// milliseconds, or nil when an optimistic write found another version in its place.
  ///
  /// With `notifying`, the statement sends the write's notification too (the shapes whose names end in
  /// `_notify`; ``SharedStatements/writeSQL(head:pruning:notifying:)``).
  static func run(
    _ write: SharedWrite, retention: HistoryRetention, prepared: Bool = true,
    notifying: SharedNotification.InlineParts? = nil, on runner: some SharedQueryRunner
  ) async throws -> (version: Int64, milliseconds: Int64)? {
    var (head, pruning, binds) = SharedStatements.write(write, retention: retention)
    if let notifying {
      binds.append(notifying.beforeVersion)
      binds.append(notifying.afterVersion)
      binds.append(notifying.beforeTime)
      binds.append(notifying.afterTime)
    }
    func run<S: NotifyingShape>(_ shape: S.Type) async throws -> (version: Int64, milliseconds: Int64)? {
      notifying == nil
        ? try await Self.run(S.self, binds, prepared, on: runner)
        : try await Self.run(Notifying<S>.self, binds, prepared, on: runner)
    }
    switch (head, pruning) {
    case (.next, false): return try await run(NextAll.self)
    case (.next, true): return try await run(NextPruned.self)
    case (.first, false): return try await run(FirstAll.self)
    case (.first, true): return try await run(FirstPruned.self)
    case (.after, false): return try await run(AfterAll.self)
    case (.after, true): return try await run(AfterPruned.self)
    }
  }

  private static func run<S: Shape>(
    _ shape: S.Type, _ binds: PostgresBindings, _ prepared: Bool, on runner: some SharedQueryRunner
  ) async throws -> (version: Int64, milliseconds: Int64)? {
    if prepared {
      for try await (version, milliseconds) in try await runner.execute(Prepared<S>(binds: binds)) {
        return (version, milliseconds)
      }
    } else {
      let rows = try await runner.run(PostgresQuery(unsafeSQL: S.sql, binds: binds))
      for try await (version, milliseconds) in rows.decode((Int64, Int64).self) {
        return (version, milliseconds)
      }
    }
    return nil
  }

  /// One shape of the statement: its SQL and name, computed once.
  protocol Shape: Sendable {
    static var sql: String { get }
    static var name: String { get }
    static var types: [PostgresDataType] { get }
  }

  /// A shape that notifies (``SharedStatements/writeSQL(head:pruning:notifying:)``).
  protocol NotifyingShape: Shape {
    /// The same shape's SQL with the notification.
    static var notifyingSQL: String { get }
  }

  /// `S` sending its notification: SQL computed once per shape (in `S`), name and types derived.
  enum Notifying<S: NotifyingShape>: Shape {
    static var sql: String { S.notifyingSQL }
    static var name: String { S.name + "_notify" }
    static var types: [PostgresDataType] { S.types + [.text, .text, .text, .text] }
  }

  /// The six shapes (head × pruning).
  enum NextAll: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .next, pruning: false)
    static let notifyingSQL = SharedStatements.writeSQL(head: .next, pruning: false, notifying: true)
    static let name = "pld_write_next"
    static let types = row
  }
  enum NextPruned: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .next, pruning: true)
    static let notifyingSQL = SharedStatements.writeSQL(head: .next, pruning: true, notifying: true)
    static let name = "pld_write_next_pruned"
    static let types = row + [.int8]
  }
  enum FirstAll: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .first, pruning: false)
    static let notifyingSQL = SharedStatements.writeSQL(head: .first, pruning: false, notifying: true)
    static let name = "pld_write_first"
    static let types = row
  }
  enum FirstPruned: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .first, pruning: true)
    static let notifyingSQL = SharedStatements.writeSQL(head: .first, pruning: true, notifying: true)
    static let name = "pld_write_first_pruned"
    static let types = row + [.int8]
  }
  enum AfterAll: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .after, pruning: false)
    static let notifyingSQL = SharedStatements.writeSQL(head: .after, pruning: false, notifying: true)
    static let name = "pld_write_after"
    static let types = row + [.int8]
  }
  enum AfterPruned: NotifyingShape {
    static let sql = SharedStatements.writeSQL(head: .after, pruning: true)
    static let notifyingSQL = SharedStatements.writeSQL(head: .after, pruning: true, notifying: true)
    static let name = "pld_write_after_pruned"
    static let types = row + [.int8, .int8]
  }

  /// The types of `$1` … `$6`: key hash, key, payload, schema version, author, reason.
  static let row: [PostgresDataType] = [.text, .text, .text, .int8, .text, .text]

  struct Prepared<S: Shape>: PostgresPreparedStatement {
    typealias Row = (Int64, Int64)
    static var sql: String { S.sql }
    static var name: String { S.name }
    static var bindingDataTypes: [PostgresDataType] { S.types }
    let binds: PostgresBindings

    func makeBindings() -> PostgresBindings { binds }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
  }
}
