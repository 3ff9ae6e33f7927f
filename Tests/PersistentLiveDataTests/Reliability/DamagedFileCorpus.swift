import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// Every kind of file the store and pld-tool must judge alike: sound stores, damaged ones, files that
/// are not stores, and paths that are not files. Each case builds `store.db` in a folder of its own and
/// names the verdict both must give: `opens`, or the ``PersistentLiveDataError`` case of the refusal.
/// One kind of file gets two: a creation interrupted by a power loss, which only a read-write open can
/// recover (the store opens it; pld-tool, reading only, says what it is and how to recover it).
struct DamagedFileCase: Sendable, CustomStringConvertible {
  let name: String
  /// The store's verdict.
  let expected: String
  /// pld-tool's verdict (read-only), when it differs from the store's.
  let expectedReadOnly: String?
  /// The verdict of the `pld-tool` binary, when it differs from the read-only inspector's: `emptyFile`
  /// for a 0-byte file, which SQLite and the library read as an empty database but pld-tool refuses.
  let expectedTool: String?
  let build: @Sendable (_ path: String) throws -> Void

  init(
    name: String, expected: String, expectedReadOnly: String? = nil, expectedTool: String? = nil,
    build: @escaping @Sendable (_ path: String) throws -> Void
  ) {
    self.name = name
    self.expected = expected
    self.expectedReadOnly = expectedReadOnly
    self.expectedTool = expectedTool
    self.build = build
  }

  var description: String { name }

  /// The files a store's creation leaves when the power fails before its first page reaches the disk: the
  /// page, as zeros, and the hot rollback journal of an empty database (header string, a page count of 0,
  /// a nonce, an initial size of 0 pages, a sector size, a page size; the rest of its 512 bytes zero), as
  /// the crash VFS of PowerLossTests leaves them. `change` alters them, for the look-alikes.
  static func interruptedCreation(
    _ path: String, initialPages: UInt32 = 0, change: (inout Data, inout Data) -> Void = { _, _ in }
  ) throws {
    var page = Data(count: 4_096)
    var journal = Data([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
    for field: UInt32 in [0, 0x1c92_2a9f, initialPages, 512, 4_096] {
      journal.append(contentsOf: withUnsafeBytes(of: field.bigEndian) { Array($0) })
    }
    journal.append(Data(count: 512 - journal.count))
    change(&page, &journal)
    try writeFile(path, page)
    try writeFile(path + "-journal", journal)
  }

  /// A closed, checkpointed store of about 60 pages (DamagedFileTests' 200 versions and 50 keys).
  static func store(_ path: String) throws {
    try Reliability.Timed.DamagedFileTests.writeStore(at: path)
  }

  /// A writer killed after `acknowledged` commits, which leaves them in a hot `-wal` file.
  static func killWriter(_ path: String, after acknowledged: Int64) throws {
    let child = try ChildProcess(ChildProcess.testChildPath, ["records", path, "crash/record", "full"])
    while let line = child.readLine(), (acknowledgedVersions([line]).first ?? 0) < acknowledged {}
    child.kill(SIGKILL)
    child.wait()
  }

  static func overwritePage(_ path: String, index: (_ pages: Int) -> Int, with filler: (Int) -> Data) throws {
    var bytes = try #require(fileBytes(path))
    let pageSize = Reliability.Timed.DamagedFileTests.pageSize(bytes)
    let page = index(bytes.count / pageSize)
    bytes.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: filler(pageSize))
    try writeFile(path, bytes)
  }

  /// A database another client made: `sql` run on a new file.
  static func database(_ path: String, _ sql: String) throws {
    let connection = try SQLiteConnection(path: path, mode: .readWrite, create: true)
    defer { connection.close() }
    try connection.execute(sql)
  }

  static let all: [DamagedFileCase] = [
    DamagedFileCase(name: "sound store", expected: "opens", build: store),
    DamagedFileCase(name: "store with a hot WAL (killed writer)", expected: "opens") { path in
      try killWriter(path, after: 20)
    },
    DamagedFileCase(name: "0-byte file", expected: "opens", expectedTool: "emptyFile") {
      try writeFile($0, Data())
    },
    DamagedFileCase(name: "text file", expected: "notADatabase") {
      try writeFile($0, Data("Shopping list:\n- milk\n- bread\n".utf8))
    },
    DamagedFileCase(name: "random bytes", expected: "notADatabase") {
      try writeFile($0, pseudoRandomBytes(count: 16_384))
    },
    DamagedFileCase(name: "shorter than a header", expected: "notADatabase") {
      try writeFile($0, Data("SQLite".utf8))
    },
    DamagedFileCase(name: "header zeroed", expected: "notADatabase") { path in
      try store(path)
      try overwritePage(path, index: { _ in 0 }, with: { Data(count: $0) })
    },
    DamagedFileCase(name: "zeroed page in the middle", expected: "corrupt") { path in
      try store(path)
      try overwritePage(path, index: { $0 / 2 }, with: { Data(count: $0) })
    },
    DamagedFileCase(name: "zeroed last page", expected: "corrupt") { path in
      try store(path)
      try overwritePage(path, index: { $0 - 1 }, with: { Data(count: $0) })
    },
    DamagedFileCase(name: "garbage page", expected: "corrupt") { path in
      try store(path)
      try overwritePage(path, index: { $0 / 3 }, with: { pseudoRandomBytes(count: $0, seed: 7) })
    },
    DamagedFileCase(name: "truncated", expected: "corrupt") { path in
      try store(path)
      try truncateFile(path, to: try #require(fileBytes(path)).count / 2)
    },
    DamagedFileCase(name: "cut short by an interrupted checkpoint, with its WAL", expected: "opens") { path in
      try killWriter(path, after: 120)
      try writePageOneAsAnInterruptedCheckpointDoes(path)
      guard case .truncated = try DatabaseFile.classify(path: path) else {
        throw TestSupportError("the file should look truncated")
      }
    },
    DamagedFileCase(name: "page 1 torn by a power loss, with its WAL", expected: "opens") { path in
      try killWriter(path, after: 120)
      // The newest page 1 is in the WAL; the file's own first sector was lost (a torn write).
      let wal = try #require(fileBytes(path + "-wal"))
      _ = try #require(WriteAheadLog.newestCommittedImage(ofPage: 1, in: wal))
      let handle = try #require(FileHandle(forUpdatingAtPath: path))
      try handle.write(contentsOf: Data(count: 512))
      try handle.close()
      guard case .notSQLite = try DatabaseFile.classify(path: path) else {
        throw TestSupportError("the file should no longer look like SQLite")
      }
    },
    DamagedFileCase(
      name: "creation interrupted by a power loss: a zeroed first page, the journal of an empty database",
      expected: "opens", expectedReadOnly: "cannotOpen"
    ) { try interruptedCreation($0) },
    DamagedFileCase(
      name: "a zeroed first page, the journal of a database that had pages", expected: "notADatabase"
    ) {
      try interruptedCreation($0, initialPages: 1)
    },
    DamagedFileCase(name: "a zeroed first page, its journal no longer hot", expected: "notADatabase") {
      try interruptedCreation($0) { _, journal in journal.resetBytes(in: 0..<8) }
    },
    DamagedFileCase(name: "one nonzero byte, the journal of an empty database", expected: "notADatabase") {
      try interruptedCreation($0) { page, _ in page[4_000] = 1 }
    },
    DamagedFileCase(name: "two pages of zeros, the journal of an empty database", expected: "notADatabase") {
      try interruptedCreation($0) { page, _ in page.append(Data(count: 65_536)) }
    },
    DamagedFileCase(name: "truncated, with a WAL that lacks the missing pages", expected: "corrupt") { path in
      try store(path)
      try killWriter(path, after: 5)
      try truncateFile(path, to: try #require(fileBytes(path)).count / 2)
    },
    DamagedFileCase(name: "damaged, with a hot WAL", expected: "corrupt") { path in
      try store(path)
      let page = try Reliability.Timed.DamagedFileTests.lastLeafPageOfValues(path)
      try killWriter(path, after: 5)
      try overwritePage(path, index: { _ in page - 1 }, with: { pseudoRandomBytes(count: $0, seed: 11) })
    },
    DamagedFileCase(name: "another application's database", expected: "foreignDatabase") {
      try database(
        $0, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hi');")
    },
    DamagedFileCase(name: "our table name without our application_id", expected: "foreignDatabase") {
      try database(
        $0, "CREATE TABLE pld_values(key TEXT, version INTEGER, written_at INTEGER, payload TEXT);")
    },
    DamagedFileCase(name: "another application_id, no table", expected: "foreignDatabase") {
      try database($0, "PRAGMA application_id = 1234567; CREATE TABLE t(x); DROP TABLE t;")
    },
    DamagedFileCase(name: "no application_id, a schema version, no table", expected: "foreignDatabase") {
      try database($0, "PRAGMA user_version = 1; CREATE TABLE t(x); DROP TABLE t;")
    },
    DamagedFileCase(name: "newer schema", expected: "schemaTooNew") { path in
      try store(path)
      try database(path, "PRAGMA user_version = 9999;")
    },
    DamagedFileCase(name: "symbolic link to a store", expected: "symbolicLink") { path in
      try store(path + ".real")
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".real")
    },
    DamagedFileCase(name: "dangling symbolic link", expected: "symbolicLink") { path in
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone")
    },
    DamagedFileCase(name: "-wal is a symbolic link", expected: "symbolicLink") { path in
      try store(path)
      try writeFile(path + ".victim", Data("do not touch\n".utf8))
      try FileManager.default.createSymbolicLink(atPath: path + "-wal", withDestinationPath: path + ".victim")
    },
    DamagedFileCase(name: "-shm is a symbolic link", expected: "symbolicLink") { path in
      try store(path)
      try writeFile(path + ".victim", Data("do not touch\n".utf8))
      try FileManager.default.createSymbolicLink(atPath: path + "-shm", withDestinationPath: path + ".victim")
    },
    DamagedFileCase(name: "directory", expected: "isADirectory") { path in
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    },
    DamagedFileCase(name: "FIFO", expected: "notADatabase") { path in
      guard mkfifo(path, 0o600) == 0 else { throw TestSupportError("mkfifo: errno \(errno)") }
    },
  ]
}

/// What an interrupted checkpoint writes first: the newest committed page 1 from the WAL, over the
/// database's page 1 — the file then says it is longer than it is, the missing pages still in the WAL.
func writePageOneAsAnInterruptedCheckpointDoes(_ path: String) throws {
  let wal = try #require(fileBytes(path + "-wal"))
  let pageOne = try #require(WriteAheadLog.newestCommittedImage(ofPage: 1, in: wal))
  let handle = try #require(FileHandle(forUpdatingAtPath: path))
  try handle.write(contentsOf: pageOne)
  try handle.close()
}
