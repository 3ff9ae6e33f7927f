import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  @Suite struct SQLiteStatementTests {
    static let awkwardTexts = [
      "a", "a\0", "a\0b", "\0", "", "it's \"quoted\"", "línea\nnueva\r\n", "日本語 🎉", "a\u{301}", "á",
      "'; DROP TABLE t; --",
    ]

    @Test func awkwardTextRoundTripsAndStaysDistinctAsPrimaryKey() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try connection.execute("CREATE TABLE t(k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
        for (index, text) in Self.awkwardTexts.enumerated() {
          try connection.run("INSERT INTO t(k, n) VALUES (?, ?)", [.text(text), .integer(Int64(index))])
        }
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == Int64(Self.awkwardTexts.count))
        for (index, text) in Self.awkwardTexts.enumerated() {
          #expect(try connection.scalarInt64("SELECT n FROM t WHERE k = ?", [.text(text)]) == Int64(index))
          #expect(try connection.scalarText("SELECT k FROM t WHERE n = ?", [.integer(Int64(index))]) == text)
          #expect(
            try connection.scalarInt64(
              "SELECT length(CAST(k AS BLOB)) FROM t WHERE n = ?", [.integer(Int64(index))])
              == Int64(text.utf8.count))
        }
      }
    }

    @Test func emptyBlobIsNotNull() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)")
      let insert = try connection.prepare("INSERT INTO t(id, b) VALUES (?, ?)")
      try insert.bind(1, at: 1)
      try insert.bind(Data(), at: 2)
      try insert.run()
      try insert.bind(2, at: 1)
      try insert.bind([UInt8](), at: 2)
      try insert.run()
      try insert.bind(3, at: 1)
      try insert.bindNull(at: 2)
      try insert.run()
      try insert.bind(4, at: 1)
      try insert.bind(Data([0, 1, 0, 255]), at: 2)
      try insert.run()

      let select = try connection.prepare("SELECT typeof(b), length(b), b FROM t ORDER BY id")
      var rows: [(String, Int64, Data, Bool)] = []
      while try select.step() {
        rows.append((select.text(0), select.int64(1), select.data(2), select.isNull(2)))
      }
      #expect(rows.map(\.0) == ["blob", "blob", "null", "blob"])
      #expect(rows.map(\.1) == [0, 0, 0, 4])
      #expect(rows.map(\.3) == [false, false, true, false])
      #expect(rows[3].2 == Data([0, 1, 0, 255]))
    }

    @Test func emptyTextIsNotNull() throws {
      let connection = try SQLiteConnection.inMemory()
      #expect(try connection.scalarText("SELECT typeof(?)", [.text("")]) == "text")
      #expect(try connection.scalarText("SELECT typeof(?)", [.null]) == "null")
    }

    @Test func numbersAndBytesRoundTrip() throws {
      let connection = try SQLiteConnection.inMemory()
      let select = try connection.prepare("SELECT ?, ?, ?, ?")
      try select.bind(Int64.min, at: 1)
      try select.bind(Int64.max, at: 2)
      try select.bind(-0.5, at: 3)
      try select.bind("x\0y", at: 4)
      #expect(try select.step())
      #expect(select.columnCount == 4)
      #expect(select.int64(0) == .min)
      #expect(select.int64(1) == .max)
      #expect(select.double(2) == -0.5)
      #expect(select.bytes(3) == [0x78, 0, 0x79])
      #expect(select.withUnsafeBytes(ofColumn: 3) { $0.count } == 3)
      #expect(try !select.step())
    }

    @Test func metadataAccessors() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
      try connection.run("INSERT INTO t(name) VALUES (?)", [.text("x")])
      #expect(connection.lastInsertRowID == 1)
      let select = try connection.prepare("SELECT id AS identifier, name FROM t WHERE id > ? AND name <> ?")
      #expect(select.parameterCount == 2)
      #expect(select.columnCount == 2)
      #expect(select.columnName(0) == "identifier")
      #expect(select.columnName(1) == "name")
    }

    @Test func bindingOutOfRangeThrowsRange() throws {
      let connection = try SQLiteConnection.inMemory()
      let statement = try connection.prepare("SELECT ?")
      let error = sqliteError { try statement.bind(1, at: 2) }
      #expect(error?.code == SQLiteCode.range)
      #expect(error?.sql == "SELECT ?")
    }

    @Test func cachedStatementIsReusedResetAndCleared() throws {
      let connection = try SQLiteConnection.inMemory()
      let first = try connection.cachedStatement("SELECT ?")
      try first.bind(42, at: 1)
      #expect(try first.step())
      #expect(first.int64(0) == 42)
      // Left mid-result on purpose: the cache must reset it and clear the binding.
      let second = try connection.cachedStatement("SELECT ?")
      #expect(first === second)
      #expect(connection.cachedStatementCount == 1)
      #expect(try second.step())
      #expect(second.isNull(0))
      _ = try connection.cachedStatement("SELECT 2")
      #expect(connection.cachedStatementCount == 2)
    }

    static let slottedSelect = SlottedSQL("SELECT ?")
    static let slottedOther = SlottedSQL("SELECT ? + 1")

    @Test func aSlottedStatementIsTheTextsCachedStatementResetAndClearedPerConnection() throws {
      #expect(Self.slottedSelect.slot != Self.slottedOther.slot)
      let connection = try SQLiteConnection.inMemory()
      let other = try connection.cachedStatement(Self.slottedOther)
      let first = try connection.cachedStatement(Self.slottedSelect)
      #expect(first === (try connection.cachedStatement("SELECT ?")), "one statement per text")
      #expect(connection.cachedStatementCount == 2)
      try first.bind(42, at: 1)
      #expect(try first.step())
      let second = try connection.cachedStatement(Self.slottedSelect)
      #expect(first === second)
      #expect(try second.step())
      #expect(second.isNull(0), "reset and cleared like a statement found by its text")
      #expect(other !== first)
      try other.bind(1, at: 1)
      #expect(try other.step() && other.int64(0) == 2)

      // Another connection has statements of its own in the same slots; a closed one none.
      let elsewhere = try SQLiteConnection.inMemory()
      #expect((try elsewhere.cachedStatement(Self.slottedSelect)) !== first)
      connection.close()
      #expect(
        sqliteError { _ = try connection.cachedStatement(Self.slottedSelect) }?.code == SQLiteCode.misuse)
    }

    @Test func prepareRefusesSeveralStatementsButAllowsTrailingComments() throws {
      let connection = try SQLiteConnection.inMemory()
      let error = sqliteError { _ = try connection.prepare("SELECT 1; SELECT 2") }
      #expect(error?.code == SQLiteCode.misuse)
      _ = try connection.prepare("SELECT 1; -- a comment\n  ")
      #expect(sqliteError { _ = try connection.prepare("  -- nothing\n") }?.code == SQLiteCode.misuse)
    }

    @Test func statementOfAClosedConnectionThrowsMisuse() throws {
      let connection = try SQLiteConnection.inMemory()
      let prepared = try connection.prepare("SELECT 1")
      let cached = try connection.cachedStatement("SELECT 2")
      connection.close()
      connection.close()
      #expect(sqliteError { _ = try prepared.step() }?.code == SQLiteCode.misuse)
      #expect(sqliteError { _ = try cached.step() }?.code == SQLiteCode.misuse)
      #expect(sqliteError { try cached.bind(1, at: 1) }?.code == SQLiteCode.misuse)
      #expect(sqliteError { _ = try connection.prepare("SELECT 1") }?.code == SQLiteCode.misuse)
      #expect(sqliteError { try connection.execute("SELECT 1") }?.code == SQLiteCode.misuse)
    }
  }
}
