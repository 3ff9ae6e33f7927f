import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  @Suite struct SQLiteConnectionTests {
    @Test func missingFileIsNotCreatedUnlessAsked() throws {
      try TemporaryDirectory.with { directory in
        let path = directory.path("missing.db")
        let error = sqliteError { _ = try SQLiteConnection(path: path) }
        #expect(error?.isCantOpen == true)
        #expect(!FileManager.default.fileExists(atPath: path))
        _ = try SQLiteConnection(path: path, create: true)
        #expect(FileManager.default.fileExists(atPath: path))
      }
    }

    @Test func emptyPathIsRefused() {
      #expect(sqliteError { _ = try SQLiteConnection(path: "", create: true) }?.isCantOpen == true)
    }

    @Test func readOnlyConnectionRefusesWritesWithReadOnly() throws {
      try TemporaryDirectory.with { directory in
        let writer = try directory.openDatabase()
        try writer.execute("CREATE TABLE t(x)")
        writer.close()
        let reader = try SQLiteConnection(path: directory.path("test.db"), mode: .readOnly)
        #expect(reader.isReadOnly)
        let error = sqliteError { try reader.run("INSERT INTO t VALUES (1)") }
        #expect(error?.code == SQLiteCode.readOnly)
        #expect(error?.isReadOnly == true)
        #expect(error?.sql == "INSERT INTO t VALUES (1)")
        #expect(try reader.scalarInt64("SELECT count(*) FROM t") == 0)
      }
    }

    @Test func symbolicLinkToADatabaseIsRefused() throws {
      try TemporaryDirectory.with { directory in
        _ = try directory.openDatabase("real.db")
        let link = directory.path("link.db")
        try FileManager.default.createSymbolicLink(
          atPath: link, withDestinationPath: directory.path("real.db"))
        for mode in [SQLiteConnection.OpenMode.readWrite, .readOnly, .readOnlyImmutable] {
          let error = sqliteError { _ = try SQLiteConnection(path: link, mode: mode) }
          #expect(error?.isCantOpen == true, "\(mode)")
          #expect(error?.extendedCode == SQLiteCode.cantOpenSymlink, "\(mode)")
        }
      }
    }

    @Test func symbolicLinkInTheParentDirectoryIsAllowed() throws {
      try TemporaryDirectory.with { directory in
        try FileManager.default.createDirectory(
          atPath: directory.path("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
          atPath: directory.path("alias"), withDestinationPath: directory.path("real"))
        let connection = try SQLiteConnection(path: directory.path("alias") + "/x.db", create: true)
        try connection.execute("CREATE TABLE t(x)")
        #expect(FileManager.default.fileExists(atPath: directory.path("real") + "/x.db"))
      }
    }

    @Test func immutableModeReadsPathsThatNeedPercentEncoding() throws {
      try TemporaryDirectory.with { directory in
        let name = "odd name ?#%&=ü.db"
        let writer = try directory.openDatabase(name)
        #expect(try writer.setPragma("journal_mode", "WAL") == "wal")
        try writer.execute("CREATE TABLE t(x); INSERT INTO t VALUES (7);")
        writer.close()
        let before = directory.contents(of: name)
        let reader = try SQLiteConnection(path: directory.path(name), mode: .readOnlyImmutable)
        #expect(try reader.scalarInt64("SELECT x FROM t") == 7)
        #expect(reader.isReadOnly)
        reader.close()
        #expect(directory.contents(of: name) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.path(name + "-shm")))
      }
    }

    @Test func immutableURIEncoding() {
      #expect(
        SQLiteConnection.immutableURI(for: "/a b/c?d#e%f.db") == "file:///a%20b/c%3Fd%23e%25f.db?immutable=1")
      #expect(SQLiteConnection.immutableURI(for: "rel/x.db") == "file:rel/x.db?immutable=1")
    }

    @Test func dataVersionChangesOnlyForOtherConnectionsCommits() throws {
      try TemporaryDirectory.with { directory in
        let watcher = try directory.openDatabase()
        #expect(try watcher.setPragma("journal_mode", "WAL") == "wal")
        try watcher.execute("CREATE TABLE t(x)")
        let start = try watcher.dataVersion()
        try watcher.run("INSERT INTO t VALUES (1)")
        #expect(try watcher.dataVersion() == start)
        let writer = try directory.openDatabase()
        try writer.run("INSERT INTO t VALUES (2)")
        #expect(try watcher.dataVersion() != start)
      }
    }

    @Test func walCheckpointTruncatesTheLog() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        #expect(try connection.setPragma("journal_mode", "WAL") == "wal")
        #expect(try connection.pragmaText("journal_mode") == "wal")
        try connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let passive = try connection.walCheckpoint()
        #expect(passive.logFrames > 0)
        #expect(passive.checkpointedFrames == passive.logFrames)
        let truncated = try connection.walCheckpoint(.truncate)
        #expect(truncated.logFrames == 0)
        let walSize = try FileManager.default.attributesOfItem(atPath: directory.path("test.db-wal"))[.size]
        #expect((walSize as? Int) == 0)
      }
    }

    @Test func walCheckpointOnARollbackJournalDatabaseReportsNoLog() throws {
      let connection = try SQLiteConnection.inMemory()
      #expect(try connection.walCheckpoint(.full) == .init(logFrames: -1, checkpointedFrames: -1))
    }

    @Test func pragmaHelpersReadSetAndRefuseInjection() throws {
      let connection = try SQLiteConnection.inMemory()
      #expect(try connection.pragmaInt("user_version") == 0)
      try connection.setPragma("user_version", 42)
      #expect(try connection.pragmaInt("main.user_version") == 42)
      #expect(
        sqliteError { _ = try connection.pragmaInt("user_version; DROP TABLE x") }?.code == SQLiteCode.misuse)
      #expect(
        sqliteError { try connection.setPragma("synchronous", "FULL; DROP") }?.code == SQLiteCode.misuse)
      try connection.setPragma("synchronous", "FULL")
      #expect(try connection.pragmaInt("synchronous") == 2)
    }

    @Test func closeIsIdempotentAndFinalizesTheCache() throws {
      let connection = try SQLiteConnection.inMemory()
      _ = try connection.scalarInt64("SELECT 1")
      #expect(connection.cachedStatementCount == 1)
      connection.close()
      connection.close()
      #expect(!connection.isOpen)
      #expect(connection.cachedStatementCount == 0)
      #expect(sqliteError { try connection.busyTimeout(10) }?.code == SQLiteCode.misuse)
    }

    @Test func openingCreatesNoFilesItselfAndKeepsThePermissions() throws {
      try TemporaryDirectory.with { directory in
        let path = directory.path("store.db")
        #expect(
          FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.setPragma("journal_mode", "WAL") == "wal")
        try connection.execute("CREATE TABLE t(x)")
        for file in ["store.db", "store.db-wal", "store.db-shm"] {
          let permissions = try FileManager.default.attributesOfItem(atPath: directory.path(file))[
            .posixPermissions]
          #expect((permissions as? Int) == 0o600, "\(file)")
        }
      }
    }
  }
}
