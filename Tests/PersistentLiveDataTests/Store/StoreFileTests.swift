import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Persistence {
  /// Closing, one store per file in a process, file modes and symbolic links.
  @Suite struct StoreFileTests {
    @Test func closedStoreRefusesWritesAndLookups() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      try store.close()
      let bytesAfterClose = fileBytes(path)

      let error = expectStoreError("storeClosed") { try count.set(2) }
      if let error {
        #expect(error.description.contains("store.db"), "the error names the file: \(error)")
      }
      expectStoreError("storeClosed") { try count.update { $0 += 1 } }
      expectStoreError("storeClosed") { try store.liveData("count", default: 0) }
      expectStoreError("storeClosed") { try store.liveData("other", default: 0) }
      expectStoreError("storeClosed") { try store.keys() }
      expectStoreError("storeClosed") { try store.transaction {} }
      #expect(count.value == 1, "live data keep their last value")
      #expect(count.version == 1)
      #expect(fileBytes(path) == bytesAfterClose)
      try store.close()  // idempotent
    }

    @Test func newStoreOnTheSamePathWorksAfterClose() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let first = try PersistentStore(path: path)
      let old = try first.liveData("count", default: 0)
      try old.set(1)
      try first.close()

      let second = try PersistentStore(path: path)
      let count = try second.liveData("count", default: 0)
      #expect(count !== old)
      #expect(count.value == 1)
      try count.set(2)
      #expect(count.version == 2)
      expectStoreError("storeClosed", "the old instance stays closed") { try old.set(3) }
      #expect(count.version == 2)
    }

    @Test func secondStoreOnAnOpenFileIsRefused() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let first = try PersistentStore(path: path)
      let count = try first.liveData("count", default: 0)
      try count.set(1)

      let error = expectStoreError("alreadyOpen") { try PersistentStore(path: path) }
      if let error {
        #expect(error.description.contains("store.db"), "the error names the file: \(error)")
      }
      try FileManager.default.createDirectory(atPath: folder.path("sub"), withIntermediateDirectories: true)
      expectStoreError("alreadyOpen", "the same file under another spelling") {
        try PersistentStore(path: folder.path("sub/../store.db"))
      }
      expectStoreError("alreadyOpen", "the same file under another spelling") {
        try PersistentStore(path: folder.path + "//./store.db")
      }

      // The refusal did not disturb the open store.
      try count.set(2)
      #expect(count.version == 2)
      try first.close()
      let second = try PersistentStore(path: path)
      #expect(try second.liveData("count", default: 0).version == 2)
    }

    @Test func releasedStoreFreesTheFile() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("count", default: 0).set(1)
      }
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      #expect(count.version == 1)
    }

    @Test func newFileIsPrivateAndMissingFoldersAreCreatedPrivate() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("a/b/c/store.db")
      let store = try PersistentStore(path: path)
      try store.liveData("value", default: 0).set(1)
      #expect(permissions(path) == 0o600, "database mode \(String(permissions(path) ?? 0, radix: 8))")
      for created in ["a", "a/b", "a/b/c"] {
        let mode = permissions(folder.path(created))
        #expect(mode == 0o700, "folder \(created) mode \(String(mode ?? 0, radix: 8))")
      }
      for companion in ["-wal", "-shm"] where fileExists(path + companion) {
        let mode = permissions(path + companion)
        #expect(mode == 0o600, "\(companion) mode \(String(mode ?? 0, radix: 8))")
      }
      try store.close()
      #expect(permissions(path) == 0o600)
    }

    @Test func existingFileKeepsItsMode() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      try writeFile(path, Data())
      #expect(chmod(path, 0o640) == 0)
      let store = try PersistentStore(path: path)
      try store.liveData("value", default: 0).set(1)
      try store.close()
      #expect(permissions(path) == 0o640)
    }

    @Test func symbolicLinkToAStoreIsRefused() throws {
      let folder = try TemporaryDirectory()
      let target = folder.path("real.db")
      do {
        let store = try PersistentStore(path: target)
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      let before = fileBytes(target)
      let link = folder.path("link.db")
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
      let error = expectStoreError("symbolicLink") { try PersistentStore(path: link) }
      if let error {
        #expect(error.description.contains("link.db"), "the error names the path: \(error)")
      }
      #expect(fileBytes(target) == before)
      #expect(!fileExists(link + "-wal"))
    }

    @Test func danglingSymbolicLinkIsRefusedAndCreatesNothing() throws {
      let folder = try TemporaryDirectory()
      let target = folder.path("missing.db")
      let link = folder.path("link.db")
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
      expectStoreError("symbolicLink") { try PersistentStore(path: link) }
      #expect(!fileExists(target), "the link's target must not be created")
    }
  }
}
