import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.Timed {
  /// Disk full and read-only media where Store/FailedWriteTests does not go: opening and creating
  /// stores on a full disk, a checkpoint that finds no room, a file system remounted read-only, a folder
  /// made immutable. Root only (tmpfs mounts, `chattr`); skipped otherwise with the reason.
  @Suite(.serialized) struct DiskFullAndReadOnlyTests {
    static func options() -> StoreOptions {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      return options
    }

    static func mountSmallFileSystem(_ size: String) throws -> SmallFileSystem {
      do {
        return try SmallFileSystem(size: size)
      } catch {
        try Test.cancel("cannot mount a tmpfs here: \(error)")
      }
    }

    /// Expects a `PersistentLiveDataError` whose case is one of `names`.
    @discardableResult
    static func expectOneOf<Result>(
      _ names: Set<String>, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation,
      _ body: () throws -> Result
    ) -> String? {
      do {
        _ = try body()
        Issue.record(
          "\(comment): expected one of \(names.sorted()), nothing was thrown", sourceLocation: sourceLocation)
        return nil
      } catch let error as PersistentLiveDataError {
        #expect(names.contains(error.caseName), "\(comment): \(error)", sourceLocation: sourceLocation)
        return error.caseName
      } catch {
        Issue.record("\(comment): not a PersistentLiveDataError: \(error)", sourceLocation: sourceLocation)
        return nil
      }
    }

    @Test(.enabled(if: isRoot, "mounting a small tmpfs needs root"))
    func creatingAStoreOnAFullDiskFailsCleanlyAndWorksOnceSpaceIsFreed() throws {
      let fileSystem = try Self.mountSmallFileSystem("1m")
      defer { fileSystem.unmount() }
      let filler = try fileSystem.fill()
      let path = "\(fileSystem.path)/store.db"
      let error = Self.expectOneOf(["diskFull", "cannotOpen"], "create on a full disk") {
        try PersistentStore(path: path, options: Self.options())
      }
      // Whatever is left behind is at most an empty file, which is a valid empty store.
      #expect(
        (fileBytes(path)?.count ?? 0) == 0,
        "a half-created store was left: \(fileBytes(path)?.count ?? 0) bytes")
      let waited = try fileSystem.remove(filler, waitingUntilFree: 512 * 1024)
      let store = try PersistentStore(path: path, options: Self.options())
      try store.liveData("value", default: 0).set(1)
      try store.close()
      Reliability.figure("disk-full create error=\(error ?? "none") freed-after=\(waited)")
    }

    @Test(.enabled(if: isRoot, "mounting a small tmpfs needs root"))
    func checkpointWithoutRoomThrowsDiskFullAndLosesNothing() throws {
      let fileSystem = try Self.mountSmallFileSystem("2m")
      defer { fileSystem.unmount() }
      let path = "\(fileSystem.path)/store.db"
      let store = try PersistentStore(path: path, options: Self.options())
      let value = try store.liveData("value", default: "")
      // Room to free later; the rest of the disk is filled by commits, all in the WAL (its automatic
      // checkpoint comes at 4 MB, more than the disk holds).
      let filler = "\(fileSystem.path)/filler"
      try writeFile(filler, Data(count: 600_000))
      var acknowledged: Int64 = 0
      var stopped: String?
      for round in 1...2_000 {
        do {
          try value.set("round \(round) " + String(repeating: "x", count: 2_000))
          acknowledged = value.version
        } catch let error as PersistentLiveDataError {
          stopped = error.caseName
          break
        }
      }
      #expect(stopped == "diskFull", "writes stopped with \(stopped ?? "nothing")")
      // The checkpoint must grow the database file: no room either.
      #expect(acknowledged > 20, "the WAL should take a good part of the disk")
      let flushError = Self.expectOneOf(["diskFull"], "flush on a full disk") { try store.flush() }
      #expect(value.version == acknowledged)
      let waited = try fileSystem.remove(filler, waitingUntilFree: 500_000)
      try store.flush()
      try value.set("after")
      try store.close()
      let reopened = try PersistentStore(path: path, options: Self.options())
      let restored = try reopened.liveData("value", default: "")
      #expect(restored.version == acknowledged + 1 && restored.value == "after")
      #expect(try restored.history().count == Int(acknowledged + 1), "gap-free, nothing lost")
      Reliability.figure(
        "disk-full checkpoint acknowledged=\(acknowledged) writeError=\(stopped ?? "none") flushError=\(flushError ?? "none") freed-after=\(waited)"
      )
    }

    /// A killed writer left a WAL; the disk is full when the store is opened again.
    @Test(.enabled(if: isRoot, "mounting a small tmpfs needs root"))
    func openingAStoreWithAHotWALOnAFullDiskNeverCrashesAndLosesNothing() throws {
      let fileSystem = try Self.mountSmallFileSystem("4m")
      defer { fileSystem.unmount() }
      let path = "\(fileSystem.path)/store.db"
      let key = "crash/record"
      let child = try ChildProcess(ChildProcess.testChildPath, ["records", path, key, "full"])
      var lines: [String] = []
      while let line = child.readLine() {
        lines.append(line)
        if (acknowledgedVersions([line]).first ?? 0) >= 30 { break }
      }
      child.kill(SIGKILL)
      child.wait()
      let lastAck = acknowledgedVersions(lines + child.readAllLines()).last ?? 0
      try? FileManager.default.removeItem(atPath: path + "-shm")  // recovery must rebuild it
      let filler = try fileSystem.fill()
      let outcome = Result { () throws -> Int64 in
        let store = try PersistentStore(path: path, options: Self.options())
        defer { try? store.close() }
        return try store.liveData(key, default: CrashRecord(version: 0)).version
      }
      if case .failure(let error) = outcome {
        #expect((error as? PersistentLiveDataError)?.caseName == "diskFull", "\(error)")
      }
      let waited = try fileSystem.remove(filler, waitingUntilFree: 1024 * 1024)
      let afterRemoval = fileSystem.describe()
      let inspection = CrashInspection.inspect(path: path, key: key, storeFirst: true)
      #expect(
        inspection.isSound,
        "\(inspection.summary); once the filler was removed: \(afterRemoval); now: \(fileSystem.describe())")
      #expect(inspection.latest == lastAck || inspection.latest == lastAck + 1, "last ack \(lastAck)")
      Reliability.figure("disk-full open-hot-wal outcome=\(outcome) freed-after=\(waited)")
    }

    /// The file system is remounted read-only under a closed store: opening gives readOnly or cannotOpen
    /// (a WAL store needs its -shm), never a crash; remounted writable, everything is there.
    @Test(.enabled(if: isRoot, "remounting a tmpfs needs root"))
    func storeOnAFileSystemRemountedReadOnlyIsRefusedClearly() throws {
      let fileSystem = try Self.mountSmallFileSystem("2m")
      defer { fileSystem.unmount() }
      let path = "\(fileSystem.path)/store.db"
      do {
        let store = try PersistentStore(path: path, options: Self.options())
        try store.liveData("value", default: 0).set(7)
        try store.close()
      }
      let before = fileBytes(path)
      guard mount("tmpfs", fileSystem.path, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=2m") == 0 else {
        try Test.cancel("remount read-only failed: errno \(errno)")
      }
      let error = Self.expectOneOf(["readOnly", "cannotOpen"], "open on a read-only mount") {
        let store = try PersistentStore(path: path, options: Self.options())
        defer { try? store.close() }
        try store.liveData("value", default: 0).set(8)
      }
      #expect(fileBytes(path) == before)
      #expect(mount("tmpfs", fileSystem.path, "tmpfs", UInt(MS_REMOUNT), "size=2m") == 0)
      let store = try PersistentStore(path: path, options: Self.options())
      let value = try store.liveData("value", default: 0)
      #expect(value.value == 7 && value.version == 1)
      try value.set(8)
      #expect(value.version == 2)
      Reliability.figure("read-only-remount open error=\(error ?? "none")")
    }

    /// `chattr +i` on the folder: the store file is writable but no -wal can be created next to it.
    @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
    func storeInAnImmutableFolderIsRefusedClearly() throws {
      let folder = try TemporaryDirectory("immutable-folder")
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path, options: Self.options())
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      let before = fileBytes(path)
      try setImmutable(true, [folder.path])
      var error: String?
      do {
        defer { try? setImmutable(false, [folder.path]) }
        error = Self.expectOneOf(["readOnly", "cannotOpen"], "open in an immutable folder") {
          let store = try PersistentStore(path: path, options: Self.options())
          defer { try? store.close() }
          try store.liveData("value", default: 0).set(2)
        }
      }
      #expect(fileBytes(path) == before)
      let store = try PersistentStore(path: path, options: Self.options())
      try store.liveData("value", default: 0).set(2)
      try store.close()
      Reliability.figure("immutable-folder open error=\(error ?? "none")")
    }
  }
}
