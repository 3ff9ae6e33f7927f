import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// A value set is on disk and comes back: a new store on the same file restores every key.
  @Suite struct StoreRestoreTests {
    @Test func newStoreOnSameFileRestoresEveryKeysLatestValueAndVersion() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let count = try store.liveData("count", default: 0)
        let title = try store.liveData("title", default: "")
        let profile = try store.liveData("profile", default: Profile(name: "", age: 0, tags: []))
        let nickname = try store.liveData("nickname", default: String?.none)
        let cleared = try store.liveData("cleared", default: Int?.none)
        let list = try store.liveData("list", default: [Int]())
        for value in 1...5 { try count.set(value * 10) }
        try title.set("first")
        try title.set("second")
        try title.set("third")
        try profile.set(Profile(name: "Ada", age: 36, tags: ["math"]))
        try profile.set(Profile(name: "Ada", age: 37, tags: ["math", "engines"]))
        try nickname.set("ace")
        try nickname.set("lovelace")
        try cleared.set(7)
        try cleared.set(nil)  // the latest value is nil, at version 2
        try list.set([1])
        try list.set([1, 2])
        try list.set([])
        try list.set([3, 2, 1])
        try store.close()
      }

      let reopened = try PersistentStore(path: path)
      let count = try reopened.liveData("count", default: -1)
      #expect(count.value == 50)
      #expect(count.version == 5)
      let title = try reopened.liveData("title", default: "default")
      #expect(title.value == "third")
      #expect(title.version == 3)
      let profile = try reopened.liveData("profile", default: Profile(name: "default", age: 0, tags: []))
      #expect(profile.value == Profile(name: "Ada", age: 37, tags: ["math", "engines"]))
      #expect(profile.version == 2)
      let nickname = try reopened.liveData("nickname", default: String?.none)
      #expect(nickname.value == "lovelace")
      #expect(nickname.version == 2)
      let cleared = try reopened.liveData("cleared", default: Int?.some(99))
      #expect(cleared.value == nil, "a stored nil is restored as nil, not replaced by the default")
      #expect(cleared.version == 2)
      let list = try reopened.liveData("list", default: [0])
      #expect(list.value == [3, 2, 1])
      #expect(list.version == 4)
      #expect(try reopened.keys().sorted() == ["cleared", "count", "list", "nickname", "profile", "title"])

      // The restored key continues where it stopped.
      try count.set(60)
      #expect(count.version == 6)
      #expect(try count.history().map(\.version) == [6, 5, 4, 3, 2, 1])
    }

    @Test func keyNeverWrittenStartsAtDefaultWithVersionZero() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let fresh = try store.liveData("fresh", default: "default")
      #expect(fresh.value == "default")
      #expect(fresh.version == 0)
      #expect(fresh.isInitialized)
      #expect(try fresh.history().isEmpty)
      #expect(try store.keys().isEmpty, "asking for a key writes nothing")
      try fresh.set("written")
      #expect(fresh.version == 1)
    }

    @Test func restoredValueIgnoresTheNewDefault() throws {
      let folder = try TemporaryDirectory()
      do {
        let store = try PersistentStore(path: folder.path("store.db"))
        try store.liveData("greeting", default: "hello").set("bonjour")
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"))
      let greeting = try store.liveData("greeting", default: "something else")
      #expect(greeting.value == "bonjour")
      #expect(greeting.version == 1)
    }

    @Test func restoresAcrossSeveralSessions() throws {
      let folder = try TemporaryDirectory()
      for session in 0..<4 {
        let store = try PersistentStore(path: folder.path("store.db"))
        let counter = try store.liveData("counter", default: 0)
        #expect(counter.version == Int64(session * 3))
        #expect(counter.value == session * 3)
        for _ in 0..<3 { try counter.update { $0 += 1 } }
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"))
      let counter = try store.liveData("counter", default: 0)
      #expect(counter.version == 12)
      #expect(try counter.history().map(\.version) == Array((1...12).reversed()))
      #expect(try counter.history().map(\.value) == Array((1...12).reversed()))
    }

    @Test func normalDurabilityPersistsAndFlushWorks() throws {
      let folder = try TemporaryDirectory()
      let options = StoreOptions(durability: .normal)
      do {
        let store = try PersistentStore(path: folder.path("store.db"), options: options)
        let note = try store.liveData("note", default: "")
        try note.set("a")
        try note.set("b")
        try store.flush()
        try note.set("c")
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"), options: options)
      let note = try store.liveData("note", default: "")
      #expect(note.value == "c")
      #expect(note.version == 3)
    }

    @Test func flushAfterWritesSucceedsAndKeepsEverything() throws {
      let folder = try TemporaryDirectory()
      do {
        let store = try PersistentStore(path: folder.path("store.db"))
        try store.flush()  // nothing written yet
        let value = try store.liveData("value", default: 0)
        try value.set(1)
        try store.flush()
        try value.set(2)
        try store.flush()
        try store.close()
      }
      let store = try PersistentStore(path: folder.path("store.db"))
      let value = try store.liveData("value", default: 0)
      #expect(value.value == 2)
      #expect(value.version == 2)
    }

    @Test func storeReportsItsPath() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      #expect(store.path == folder.path("store.db"))
      #expect(try PersistentStore.inMemory().path == nil)
    }
  }

  /// `PersistentStore.inMemory()` behaves like a file store for everything but the file.
  @Suite struct InMemoryStoreTests {
    @Test func supportsTheBasics() throws {
      let store = try PersistentStore.inMemory()
      #expect(store.path == nil)
      let count = try store.liveData("count", default: 0)
      #expect(count.version == 0)
      try count.set(1)
      try count.set(2)
      let updated = try count.update { $0 *= 10 }
      #expect(updated == 20)
      #expect(count.value == 20)
      #expect(count.version == 3)
      #expect(try count.history().map(\.version) == [3, 2, 1])
      #expect(try count.history().map(\.value) == [20, 2, 1])
      #expect(try count.value(at: 2) == 2)
      #expect(try count.value(at: 4) == nil)
      try count.rollback(to: 1)
      #expect(count.value == 1)
      #expect(count.version == 4)
      expectStoreError("unknownVersion") { try count.rollback(to: 9) }
      #expect(try store.liveData("count", default: 0) === count)
      expectStoreError("typeMismatch") { try store.liveData("count", default: "text") }
      expectStoreError("invalidKey") { try store.liveData("", default: 0) }

      let other = try store.liveData("other", default: "x")
      struct Abort: Error {}
      #expect(throws: Abort.self) {
        try store.transaction {
          try other.set("y")
          try count.set(100)
          throw Abort()
        }
      }
      #expect(other.version == 0)
      #expect(count.value == 1)
      try store.transaction {
        try other.set("y")
        try count.set(100)
      }
      #expect(other.value == "y")
      #expect(count.version == 5)
      #expect(try store.keys().sorted() == ["count", "other"])

      try store.close()
      expectStoreError("storeClosed") { try count.set(5) }
      expectStoreError("storeClosed") { try store.liveData("count", default: 0) }
      expectStoreError("storeClosed") { try store.keys() }
    }

    @Test func inMemoryFlushSucceeds() throws {
      let store = try PersistentStore.inMemory()
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      try store.flush()
      #expect(count.version == 1)
    }

    @Test func inMemoryStoresAreIndependent() throws {
      let first = try PersistentStore.inMemory()
      let second = try PersistentStore.inMemory()
      try first.liveData("shared", default: 0).set(1)
      let other = try second.liveData("shared", default: 0)
      #expect(other.version == 0)
      #expect(other.value == 0)
      #expect(try second.keys().isEmpty)
    }

    @Test func inMemoryStoreAppliesRetention() throws {
      let store = try PersistentStore.inMemory(options: StoreOptions(retention: .last(2)))
      let value = try store.liveData("value", default: 0)
      for number in 1...10 { try value.set(number) }
      #expect(try value.history().map(\.version) == [10, 9])
      #expect(try value.value(at: 8) == nil)
    }
  }
}
