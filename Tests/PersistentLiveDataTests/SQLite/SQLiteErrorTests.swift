import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  @Suite struct SQLiteErrorTests {
    @Test func syntaxErrorCarriesCodeMessageAndSQL() throws {
      let connection = try SQLiteConnection.inMemory()
      let error = sqliteError { _ = try connection.prepare("SELEC 1") }
      #expect(error?.code == SQLiteCode.error)
      #expect(error?.sql == "SELEC 1")
      #expect(error?.message.contains("syntax error") == true)
      #expect(error?.description.contains("SELEC 1") == true)
    }

    @Test func constraintViolationCarriesExtendedCodeAndSQL() throws {
      let connection = try SQLiteConnection.inMemory()
      try connection.execute("CREATE TABLE t(k TEXT PRIMARY KEY) WITHOUT ROWID")
      let insert = "INSERT INTO t(k) VALUES (?)"
      try connection.run(insert, [.text("a")])
      let error = sqliteError { try connection.run(insert, [.text("a")]) }
      #expect(error?.code == SQLiteCode.constraint)
      #expect(error?.extendedCode == SQLiteCode.constraintPrimaryKey)
      #expect(error?.isConstraint == true)
      #expect(error?.sql == insert)
      #expect(error?.description.hasPrefix("SQLite error 19/1555 (constraint failed)") == true)
    }

    @Test func executeReportsTheScriptAndTheMessage() throws {
      let connection = try SQLiteConnection.inMemory()
      let script = "CREATE TABLE a(x); INSERT INTO missing VALUES (1);"
      let error = sqliteError { try connection.execute(script) }
      #expect(error?.code == SQLiteCode.error)
      #expect(error?.message == "no such table: missing")
      #expect(error?.sql == script)
    }

    @Test func predicatesFollowThePrimaryCode() {
      let busy = SQLiteError(extendedCode: 5 | (2 << 8), message: "busy")
      #expect(busy.code == 5 && busy.isBusy && !busy.isFull)
      #expect(SQLiteError(extendedCode: 13, message: "").isFull)
      #expect(SQLiteError(extendedCode: 8, message: "").isReadOnly)
      #expect(SQLiteError(extendedCode: 11, message: "").isCorrupt)
      #expect(SQLiteError(extendedCode: 26, message: "").isNotADatabase)
      #expect(SQLiteError(extendedCode: 14, message: "").isCantOpen)
      #expect(SQLiteError(extendedCode: 10 | (1 << 8), message: "").isIOError)
      #expect(SQLiteError(extendedCode: 1550, message: "").isSymlinkRefused)
    }

    @Test func garbageFileFailsAtTheFirstStatementWithNotADatabase() throws {
      try TemporaryDirectory.with { directory in
        let path = try directory.write(Array(repeating: 0x41, count: 4096), to: "garbage.db")
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        let error = sqliteError { _ = try connection.pragmaInt("user_version") }
        #expect(error?.isNotADatabase == true)
      }
    }
  }
}
