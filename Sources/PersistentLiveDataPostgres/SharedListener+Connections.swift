import NIOCore
import PostgresNIO

extension SharedListener {
  /// Closes a listening session's connection before its lease ends: it is never handed back to the pool,
  /// for it may be broken (a read on it failed), it listens and it is named. The pool learns of the close
  /// from the connection's close future, through a callback registered when it opened the connection —
  /// before this one, so it has run when this returns: a connection released while still closing would
  /// be leased to the next query, which would then fail with `clientClosedConnection`.
  static func closeBeforeRelease(_ connection: PostgresConnection) async {
    let _: EventLoopFuture<Void> = connection.close()
    _ = try? await connection.closeFuture.get()
  }
}
