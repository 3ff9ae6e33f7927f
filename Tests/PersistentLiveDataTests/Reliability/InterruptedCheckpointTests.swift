import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.InjectedFaults {
  /// A checkpoint copies pages from the WAL into the database file in increasing page order, page 1 —
  /// which holds the new database size — first. A crash or power loss in the middle of one leaves a file
  /// shorter than its header claims, with every missing page still in the WAL: a sound database that
  /// SQLite recovers. (The power-loss loop found the store refusing such files as "truncated".)
  @Suite struct InterruptedCheckpointTests {
    @Test func fileCutShortByAnInterruptedCheckpointOpensWithEverythingAcknowledged() throws {
      let folder = try TemporaryDirectory("checkpoint")
      let path = folder.path("store.db")
      let key = "crash/record"
      // A killed writer leaves its commits in the WAL; the database file still has the first page only.
      let child = try ChildProcess(ChildProcess.testChildPath, ["records", path, key, "full"])
      var lines: [String] = []
      while let line = child.readLine() {
        lines.append(line)
        if acknowledgedVersions([line]).first ?? 0 >= 120 { break }
      }
      child.kill(SIGKILL)
      child.wait()
      lines += child.readAllLines()
      let lastAck = try #require(acknowledgedVersions(lines).last, "the child wrote nothing: \(lines)")

      try writePageOneAsAnInterruptedCheckpointDoes(path)
      guard case .truncated = try DatabaseFile.classify(path: path) else {
        Issue.record("the file should now look truncated: \(try DatabaseFile.classify(path: path))")
        return
      }

      let inspection = CrashInspection.inspect(path: path, key: key, storeFirst: true)
      #expect(inspection.isSound, "\(inspection.summary)")
      #expect(inspection.latest == lastAck || inspection.latest == lastAck + 1, "last ack \(lastAck)")
    }
  }
}

/// Reading frames of an SQLite WAL file (https://www.sqlite.org/fileformat.html, "4.1. WAL File Format"):
/// a 32-byte header, then frames of a 24-byte header and one page each.
enum WriteAheadLog {
  static func bigEndian32(_ bytes: Data, _ offset: Int) -> UInt32 {
    let start = bytes.startIndex + offset
    return bytes[start..<start + 4].reduce(0) { $0 << 8 | UInt32($1) }
  }

  /// The image of `page` in the newest committed transaction that wrote it, or nil.
  static func newestCommittedImage(ofPage page: UInt32, in wal: Data) -> Data? {
    guard wal.count >= 32 else { return nil }
    let pageSize = Int(bigEndian32(wal, 8))
    let salts = (bigEndian32(wal, 16), bigEndian32(wal, 20))
    var offset = 32
    var pending: Data?
    var committed: Data?
    while offset + 24 + pageSize <= wal.count {
      // Frames of an older WAL generation (other salts) are not part of the log.
      guard (bigEndian32(wal, offset + 8), bigEndian32(wal, offset + 12)) == salts else { break }
      if bigEndian32(wal, offset) == page {
        let start = wal.startIndex + offset + 24
        pending = wal[start..<start + pageSize]
      }
      if bigEndian32(wal, offset + 4) != 0 {  // a commit frame: the database size after the commit
        committed = pending ?? committed
      }
      offset += 24 + pageSize
    }
    return committed.map { Data($0) }
  }
}
