import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  @Suite struct SQLiteTransactionTests {
    struct Boom: Error {}

    @Test func committedTransactionSurvivesReopen() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try connection.execute("CREATE TABLE t(x)")
        try connection.inTransaction(.immediate) {
          try connection.run("INSERT INTO t VALUES (?)", [.integer(1)])
          try connection.run("INSERT INTO t VALUES (?)", [.integer(2)])
        }
        #expect(!connection.isInTransaction)
        connection.close()
        let reopened = try directory.openDatabase()
        #expect(try reopened.scalarInt64("SELECT sum(x) FROM t") == 3)
      }
    }

    @Test func throwingBodyRollsBack() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(x)")
      #expect(throws: Boom.self) {
        try connection.inTransaction(.immediate) {
          try connection.run("INSERT INTO t VALUES (1)")
          throw Boom()
        }
      }
      #expect(!connection.isInTransaction)
      #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
    }

    @Test func explicitBeginCommitAndRollback() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(x)")
      try connection.begin()
      #expect(connection.isInTransaction)
      try connection.run("INSERT INTO t VALUES (1)")
      connection.rollback()
      try connection.begin(.exclusive)
      try connection.run("INSERT INTO t VALUES (2)")
      try connection.commit()
      #expect(try connection.scalarInt64("SELECT group_concat(x) FROM t") == 2)
      #expect(connection.changes == 1)
      #expect(connection.totalChanges == 2)
    }

    @Test func rollbackWithoutTransactionIsANoOpAndCommitWithoutOneThrows() throws {
      let connection = try SQLiteConnection.inMemory()
      connection.rollback()
      let error = sqliteError { try connection.commit() }
      #expect(error?.code == SQLiteCode.error)
      #expect(error?.message.contains("no transaction is active") == true)
    }

    @Test func nestedTransactionIsAnErrorAndLeavesTheOuterOneUsable() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(x)")
      try connection.begin(.immediate)
      #expect(sqliteError { try connection.begin() }?.code == SQLiteCode.error)
      let nested = sqliteError {
        try connection.inTransaction { try connection.run("INSERT INTO t VALUES (9)") }
      }
      #expect(nested?.message.contains("within a transaction") == true)
      #expect(connection.isInTransaction)
      try connection.run("INSERT INTO t VALUES (1)")
      try connection.commit()
      #expect(try connection.scalarInt64("SELECT group_concat(x) FROM t") == 1)

      // inTransaction inside inTransaction: the inner begin fails, the outer body throws and rolls back.
      let error = sqliteError {
        try connection.inTransaction(.immediate) {
          try connection.run("INSERT INTO t VALUES (2)")
          try connection.inTransaction { try connection.run("INSERT INTO t VALUES (3)") }
        }
      }
      #expect(error?.code == SQLiteCode.error)
      #expect(!connection.isInTransaction)
      #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 1)
    }

    @Test func secondWriterGetsBusyWhileTheFirstHoldsTheLock() throws {
      try TemporaryDirectory.with { directory in
        let writer = try directory.openDatabase()
        #expect(try writer.setPragma("journal_mode", "WAL") == "wal")
        try writer.execute("CREATE TABLE t(x)")
        let other = try directory.openDatabase()
        try other.busyTimeout(0)
        try writer.begin(.immediate)
        let error = sqliteError { try other.begin(.immediate) }
        #expect(error?.isBusy == true)
        #expect(!other.isInTransaction)
        writer.rollback()
        try other.inTransaction(.immediate) { try other.run("INSERT INTO t VALUES (1)") }
      }
    }
  }
}
