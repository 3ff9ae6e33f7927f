import PostgresNIO

/// Something a statement can run on: the client (one pooled connection, autocommit) or the connection
/// of an open transaction.
protocol SharedQueryRunner {
  func run(_ query: PostgresQuery) async throws -> PostgresRowSequence
  func execute<Statement: PostgresPreparedStatement>(
    _ statement: Statement
  ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row>
}

extension PostgresClient: SharedQueryRunner {
  func run(_ query: PostgresQuery) async throws -> PostgresRowSequence {
    try await self.query(query, logger: SharedSchema.quiet)
  }

  func execute<Statement: PostgresPreparedStatement>(
    _ statement: Statement
  ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
    try await execute(statement, logger: SharedSchema.quiet)
  }
}

extension PostgresConnection: SharedQueryRunner {
  func run(_ query: PostgresQuery) async throws -> PostgresRowSequence {
    try await self.query(query, logger: SharedSchema.quiet)
  }

  func execute<Statement: PostgresPreparedStatement>(
    _ statement: Statement
  ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
    try await execute(statement, logger: SharedSchema.quiet)
  }
}
