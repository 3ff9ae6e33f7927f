import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension StorageTests {
  @Suite struct DatabaseFileHeaderTests {
    @Test func missingPath() throws {
      try TemporaryDirectory.with { directory in
        let status = try DatabaseFile.classify(path: directory.path("nothing.db"))
        #expect(status == .missing)
      }
    }

    @Test func zeroByteFileIsAnEmptyDatabase() throws {
      try TemporaryDirectory.with { directory in
        let path = try directory.write([], to: "empty.db")
        #expect(try DatabaseFile.classify(path: path) == .empty)
      }
    }

    @Test func textFileIsNotSQLite() throws {
      try TemporaryDirectory.with { directory in
        let text = Array(String(repeating: "key = value\n", count: 20).utf8)
        let path = try directory.write(text, to: "notes.txt")
        #expect(try DatabaseFile.classify(path: path) == .notSQLite(fileSize: Int64(text.count)))
      }
    }

    @Test func randomBytesAreNotSQLite() throws {
      try TemporaryDirectory.with { directory in
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<8192).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let path = try directory.write(bytes, to: "random.db")
        #expect(try DatabaseFile.classify(path: path) == .notSQLite(fileSize: 8192))
      }
    }

    @Test func magicAloneIsNotEnough() throws {
      try TemporaryDirectory.with { directory in
        let short = try directory.write(DatabaseFileHeader.magic + [1, 2, 3], to: "short.db")
        #expect(try DatabaseFile.classify(path: short) == .notSQLite(fileSize: 19))
        var badPageSize = DatabaseFileHeader.magic + [UInt8](repeating: 0, count: 84)
        badPageSize[16] = 0x03  // 768: not a power of two
        #expect(DatabaseFileHeader(bytes: badPageSize) == nil)
      }
    }

    @Test func migratedWALDatabaseHeader() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        #expect(try connection.setPragma("journal_mode", "WAL") == "wal")
        try Migrator().migrate(connection)
        try connection.walCheckpoint(.truncate)
        connection.close()
        let status = try DatabaseFile.classify(path: directory.path("test.db"))
        guard case .sqlite(let header, let fileSize) = status else {
          Issue.record("expected an SQLite file, got \(status)")
          return
        }
        #expect(header.pageSize == 4096)
        #expect(header.isWAL)
        #expect(header.writeVersion == 2 && header.readVersion == 2)
        #expect(header.applicationID == Migrator.applicationID)
        #expect(header.userVersion == Int32(Migrator.latestVersion))
        #expect(header.textEncoding == 1)
        #expect(header.isInHeaderSizeValid)
        #expect(header.expectedFileSize == fileSize)
        #expect(header.sqliteVersionNumber >= 3_040_000)
      }
    }

    @Test func pageSize65536IsEncodedAsOne() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try connection.setPragma("page_size", 65_536)
        try connection.execute("CREATE TABLE t(x)")
        connection.close()
        let bytes = try #require(directory.contents(of: "test.db"))
        #expect(bytes[16] == 0 && bytes[17] == 1)
        let header = try #require(DatabaseFileHeader(bytes: bytes))
        #expect(header.pageSize == 65_536)
        #expect(!header.isWAL)
        #expect(header.writeVersion == 1)
      }
    }

    @Test func truncatedDatabase() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try connection.execute("CREATE TABLE t(x BLOB)")
        try connection.run("INSERT INTO t VALUES (zeroblob(100000))")
        connection.close()
        let path = directory.path("test.db")
        guard case .sqlite(let header, let fullSize) = try DatabaseFile.classify(path: path) else {
          Issue.record("expected an SQLite file")
          return
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(fullSize / 2))
        try handle.close()
        #expect(try DatabaseFile.classify(path: path) == .truncated(header, fileSize: fullSize / 2))
      }
    }

    @Test func foreignSQLiteDatabaseKeepsItsIdentity() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase("foreign.db")
        try connection.setPragma("application_id", 0x1234_5678)
        try connection.setPragma("user_version", 7)
        try connection.execute("CREATE TABLE contacts(name TEXT)")
        connection.close()
        let status = try DatabaseFile.classify(path: directory.path("foreign.db"))
        guard case .sqlite(let header, _) = status else {
          Issue.record("expected an SQLite file, got \(status)")
          return
        }
        #expect(header.applicationID == 0x1234_5678)
        #expect(header.applicationID != Migrator.applicationID)
        #expect(header.userVersion == 7)
        #expect(!header.isWAL)
      }
    }

    @Test func symbolicLinkAndDirectoryAreReportedNotFollowed() throws {
      try TemporaryDirectory.with { directory in
        _ = try directory.openDatabase("real.db")
        let link = directory.path("link.db")
        try FileManager.default.createSymbolicLink(
          atPath: link, withDestinationPath: directory.path("real.db"))
        #expect(try DatabaseFile.classify(path: link) == .symbolicLink)
        #expect(DatabaseFile.isSymbolicLink(path: link))
        #expect(!DatabaseFile.isSymbolicLink(path: directory.path("real.db")))
        let dangling = directory.path("dangling.db")
        try FileManager.default.createSymbolicLink(
          atPath: dangling, withDestinationPath: directory.path("gone.db"))
        #expect(DatabaseFile.isSymbolicLink(path: dangling))
        #expect(try DatabaseFile.classify(path: directory.path) == .directory)
        let fifo = directory.path("fifo.db")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(try DatabaseFile.classify(path: fifo) == .notRegularFile)
      }
    }

    /// The rollback journal's header ("4.1. The Rollback Journal"): the header string, then the page count,
    /// the nonce and, at offset 16, the initial size of the database in pages, big-endian.
    @Test func rollbackJournalHeaderReadsTheInitialSizeAndNeedsTheHeaderString() {
      let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
      let fields: [UInt8] = [0, 0, 0, 0, 0x1c, 0x92, 0x2a, 0x9f, 0x00, 0x01, 0x02, 0x03]
      #expect(RollbackJournalHeader(bytes: magic + fields)?.initialDatabasePages == 0x0001_0203)
      #expect(
        RollbackJournalHeader(bytes: magic + fields + [0, 0, 2, 0])?.initialDatabasePages == 0x0001_0203)
      #expect(RollbackJournalHeader(bytes: magic + fields.dropLast()) == nil, "shorter than the field")
      #expect(RollbackJournalHeader(bytes: [0, 0, 0, 0, 0, 0, 0, 0] + fields) == nil, "zeroed: not hot")
      #expect(RollbackJournalHeader(bytes: magic.dropLast() + [0xd8] + fields) == nil)
    }

    @Test func classifyingDoesNotModifyTheFile() throws {
      try TemporaryDirectory.with { directory in
        let connection = try directory.openDatabase()
        try connection.execute("CREATE TABLE t(x)")
        connection.close()
        let path = directory.path("test.db")
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let bytes = directory.contents(of: "test.db")
        _ = try DatabaseFile.classify(path: path)
        #expect(directory.contents(of: "test.db") == bytes)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == before)
      }
    }
  }
}
