import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataCore

extension Persistence {
  /// One way a commit reaches memory: the writer hands the key's live value the version with the value
  /// it wrote (`CommittedWrite`), which the live value takes as it is when it has its type — whoever wrote
  /// it (the value itself, a collection, a transaction) — and decodes otherwise, after the lock.
  ///
  /// Serialized: the decode counters are the types' own, so a test that decodes a value on purpose must
  /// not run while another counts (under ThreadSanitizer they once overlapped, and one saw two decodes).
  @Suite(.serialized) struct CommittedWriteTests {
    /// Values that count how often they are decoded: two types, so that a write of one can meet a live
    /// value of the other, each with its own counter.
    struct Item: Codable, Sendable, Equatable {
      static let decodes = Locked(0)
      var number: Int
      init(number: Int) { self.number = number }
      init(from decoder: any Decoder) throws {
        number = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .number)
        Self.decodes.withLock { $0 += 1 }
      }
    }

    struct Setting: Codable, Sendable, Equatable {
      static let decodes = Locked(0)
      var number: Int
      init(number: Int) { self.number = number }
      init(from decoder: any Decoder) throws {
        number = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .number)
        Self.decodes.withLock { $0 += 1 }
      }
    }

    @Test func aMemberWrittenThroughItsCollectionMovesTheMembersLiveValueWithoutDecoding() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("a.db"))
      let items = try store.collection("items", of: Item.self)
      let member = try store.liveData("items/a", default: Item(number: 0))
      let decodedBefore = Item.decodes.withLock { $0 }

      try items.set(Item(number: 7), for: "a")
      #expect(member.value == Item(number: 7) && member.version == 1, "moved before set returned")
      try store.transaction { try items.set(Item(number: 8), for: "a") }
      #expect(member.value == Item(number: 8) && member.version == 2)
      #expect(Item.decodes.withLock { $0 } == decodedBefore, "taken as written: never decoded")

      // Raw JSON (what pld-tool writes) has no value of the type: the live value and the collection each
      // decode it, once.
      _ = try store.setJSON(Data(#"{"number":9}"#.utf8), forKey: "items/a")
      #expect(member.value == Item(number: 9) && member.version == 3)
      #expect(items["a"] == Item(number: 9))
      #expect(Item.decodes.withLock { $0 } == decodedBefore + 2, "the raw row is decoded where it is held")
    }

    @Test func aValueOfAnotherTypeIsDecodedByTheLiveValueAndNotCastAcross() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("a.db"))
      // The member key's live value has another type than the collection's elements (same JSON shape).
      let items = try store.collection("things", of: Item.self)
      let member = try store.liveData("things/a", default: Setting(number: 0))
      let settingsBefore = Setting.decodes.withLock { $0 }
      try items.set(Item(number: 5), for: "a")
      #expect(member.value == Setting(number: 5) && member.version == 1)
      #expect(Setting.decodes.withLock { $0 } == settingsBefore + 1)
    }

    /// Applying a commit reads the version in memory without marking the value as watched: a value
    /// nobody reads or observes keeps scheduling no main-actor dispatch, whoever writes it.
    @Test func applyingACommitDoesNotMakeAnUnwatchedValueScheduleDeliveries() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("a.db"))
      let data = try store.liveData("quiet", default: Setting(number: 0))
      data.storage.withLock { $0.isWatched = false }  // whatever opening it read
      try data.set(Setting(number: 1))
      try data.set(Setting(number: 2))
      _ = try store.setJSON(Data(#"{"number":3}"#.utf8), forKey: "quiet")  // a row decoded by it
      #expect(data.snapshot.value == Setting(number: 3))
      let (watched, scheduled) = data.storage.withLock { ($0.isWatched, $0.dispatchScheduled) }
      #expect(!watched && !scheduled, "nobody to deliver to: nothing scheduled")
    }

    @MainActor
    @Test func aWriteOnTheMainActorCallsItsObserversBeforeItReturnsWhoeverWroteIt() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("a.db"))
      let setting = try store.liveData("setting", default: Setting(number: 0))
      let items = try store.collection("list", of: Setting.self)
      let member = try store.liveData("list/x", default: Setting(number: 0))
      var seen: [Int] = []
      var memberSeen: [Int] = []
      let observer = setting.observeForever(receiveCurrent: false) { seen.append($0.number) }
      let memberObserver = member.observeForever(receiveCurrent: false) { memberSeen.append($0.number) }
      defer {
        observer.cancel()
        memberObserver.cancel()
      }
      let decodedBefore = Setting.decodes.withLock { $0 }
      try setting.set(Setting(number: 1))
      #expect(seen == [1])
      try store.transaction {
        try setting.set(Setting(number: 2))
        try items.set(Setting(number: 3), for: "x")
      }
      #expect(seen == [1, 2] && memberSeen == [3], "a transaction's writes, before it returned")
      #expect(Setting.decodes.withLock { $0 } == decodedBefore)
    }
  }
}
