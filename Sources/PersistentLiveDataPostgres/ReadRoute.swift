import PostgresNIO

/// Where a read goes: to any connection of the pool, or to one connection the caller holds (the
/// listener reads on the connection it listens on, which it knows is alive).
enum ReadRoute: Sendable {
  case pool
  case connection(PostgresConnection)

  func query(_ query: PostgresQuery, client: PostgresClient) async throws -> PostgresRowSequence {
    switch self {
    case .pool: try await client.query(query, logger: SharedSchema.quiet)
    case .connection(let connection): try await connection.query(query, logger: SharedSchema.quiet)
    }
  }
}
