import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

#if canImport(Glibc)
import Glibc
#endif

/// What a user meets first on a real store: `history` of a long-lived key shows the newest 20 unless
/// told otherwise, `import` reads a pipe or FIFO, and `inspect` on a damaged file says so, readably, and
/// exits 1.
@Suite(.ownThread) struct EverydayCommandTests {
  @Test func historyShowsTheNewestTwentyUnlessToldOtherwise() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    let counter = try store.liveData("counter", default: 0)
    for value in 1...45 { try counter.set(value) }
    try store.close()

    let plain = runInProcess(["history", path, "counter", "--json"])
    #expect(plain.status == 0, "\(plain)")
    let rows = try #require(try plain.json() as? [[String: Any]])
    #expect(rows.map { $0["version"] as? Int64 } == (26...45).reversed().map { Int64($0) })
    #expect(
      plain.stderr.contains("the newest 20 versions") && plain.stderr.contains("--all"), "\(plain.stderr)")
    let all = runInProcess(["history", path, "counter", "--all", "--json"])
    #expect(try #require(try all.json() as? [[String: Any]]).count == 45)
    #expect(all.stderr.isEmpty)
    let limited = runInProcess(["history", path, "counter", "--limit", "50"])
    #expect(limited.status == 0 && limited.stderr.isEmpty)
    #expect(limited.stdout.components(separatedBy: "\n\n").count == 45)
    let both = runInProcess(["history", path, "counter", "--all", "--limit", "3"])
    #expect(both.status != 0 && both.stderr.contains("not both"), "\(both)")
    // A key with fewer versions than the limit: all of them, nothing said.
    let short = runInProcess(["history", path, "counter", "--limit", "45"])
    #expect(short.stderr.isEmpty)
  }

  @Test func importReadsAPipeAndAFIFO() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    try PersistentStore(path: path).close()
    let lines = Data(#"{"key":"a","value":1}\#n{"key":"b","value":[true]}\#n"#.utf8)

    // A pipe, as the shell's `<(…)` gives one: /dev/fd/N of a pipe whose writer is still open.
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let writeEnd = fds[1]
    let writer = Thread {
      lines.withUnsafeBytes { _ = write(writeEnd, $0.baseAddress, $0.count) }
      close(writeEnd)
    }
    writer.start()
    let fromPipe = runInProcess(["import", path, "/dev/fd/\(fds[0])"])
    close(fds[0])
    #expect(fromPipe.status == 0, "\(fromPipe)")

    // A FIFO, written by another thread while import reads it.
    let fifo = directory.path("lines.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let fifoWriter = Thread {
      guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
      handle.write(Data(#"{"key":"a","value":2}\#n"#.utf8))
      try? handle.close()
    }
    fifoWriter.start()
    let fromFIFO = runInProcess(["import", path, fifo])
    #expect(fromFIFO.status == 0, "\(fromFIFO)")

    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }
    #expect(try inspector.rows(key: "a", limit: nil).map(\.version) == [2, 1])
    #expect(try inspector.rows(key: "b", limit: nil).count == 1)
    // A folder is not a file of lines: said, nothing imported.
    let folder = runInProcess(["import", path, directory.path])
    #expect(folder.status == 1 && folder.stderr.contains("cannot be read"), "\(folder)")
  }

  @Test func inspectOfADamagedFileSaysSoReadablyAndExitsOne() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let store = try PersistentStore(path: path)
    for index in 0..<400 {
      try store.liveData("key-\(index)", default: "").set(String(repeating: "x", count: 300))
    }
    try store.close()
    // Garbage over a page in the middle of the file: the header still opens, a b-tree page does not.
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    let size = try handle.seekToEnd()
    try handle.seek(toOffset: size / 2 / 4_096 * 4_096)
    handle.write(Data(repeating: 0xA5, count: 4_096))
    try handle.close()

    let human = runInProcess(["inspect", path])
    #expect(human.status == 1, "\(human)")
    #expect(human.stdout.contains("Integrity:       damaged"), "\(human.stdout)")
    #expect(!human.stdout.contains("\\n"), "no literal \\n: \(human.stdout)")
    let json = runInProcess(["inspect", path, "--json"])
    #expect(json.status == 1)
    let integrity = try #require((try json.json() as? [String: Any])?["integrity"] as? [String: Any])
    #expect(integrity["ok"] as? Bool == false)
  }
}

extension EverydayCommandTests {
  @Test func aNumberBeyondWhatAValueHoldsIsSaidSoAndNothingIsWritten() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    try PersistentStore(path: path).close()
    for text in ["1e999", "-1e400", #"{"limit": [1, 2e308]}"#] {
      let result = runInProcess(["set", path, "n", text])
      #expect(result.status == 1, "\(text): \(result)")
      #expect(result.stderr.contains("is beyond what a value can hold"), "\(text): \(result.stderr)")
      #expect(result.stderr.contains("write it as a string"))
    }
    let inspector = try StoreInspector(path: path)
    #expect(try inspector.keys().isEmpty, "nothing written")
    inspector.close()
    // Large numbers that a 64-bit floating-point number holds are kept.
    #expect(runInProcess(["set", path, "n", "1e300"]).status == 0)
  }
}
