import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// `transaction {}` is all-or-nothing, in memory and on disk; observers hear of it after the commit.
  @MainActor @Suite struct TransactionTests {
    struct Abort: Error {}

    @Test func throwingBodyChangesNothingInMemoryOrOnDisk() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let from = try store.liveData("from", default: 100)
        let to = try store.liveData("to", default: 0)
        let fresh = try store.liveData("fresh", default: "")
        try from.set(100)
        let fromDeliveries = DeliveryRecorder<Int>()
        let toDeliveries = DeliveryRecorder<Int>()
        let freshDeliveries = DeliveryRecorder<String>()
        let observers = [
          from.observeForever(receiveCurrent: false, fromDeliveries.callback),
          to.observeForever(receiveCurrent: false, toDeliveries.callback),
        ]
        let freshObserver = fresh.observeForever(receiveCurrent: false, freshDeliveries.callback)
        defer {
          for observer in observers { observer.cancel() }
          freshObserver.cancel()
        }
        let bytesBefore = fileBytes(path)

        #expect(throws: Abort.self, "the body's error is rethrown") {
          try store.transaction {
            try from.update { $0 -= 10 }
            try to.update { $0 += 10 }
            try fresh.set("never")
            throw Abort()
          }
        }

        #expect(from.value == 100)
        #expect(from.version == 1)
        #expect(to.value == 0)
        #expect(to.version == 0)
        #expect(fresh.version == 0)
        fromDeliveries.expectNothing("no observer hears of a rolled-back transaction")
        toDeliveries.expectNothing("no observer hears of a rolled-back transaction")
        freshDeliveries.expectNothing("no observer hears of a rolled-back transaction")
        #expect(try from.history().map(\.version) == [1])
        #expect(try to.history().isEmpty)
        #expect(try fresh.history().isEmpty)
        #expect(try store.keys() == ["from"])
        #expect(fileBytes(path) == bytesBefore)

        // Version numbers used inside the rolled-back transaction are not consumed.
        try to.set(5)
        #expect(to.version == 1)
        toDeliveries.expect([5])
        try from.set(95)
        #expect(from.version == 2)
        fromDeliveries.expect([95])
        try store.close()
      }
      let store = try PersistentStore(path: path)
      #expect(try store.keys().sorted() == ["from", "to"])
      #expect(try store.liveData("from", default: 0).history().map(\.value) == [95, 100])
      #expect(try store.liveData("to", default: 0).history().map(\.value) == [5])
    }

    @Test func rolledBackTransactionIsAbsentAfterReopen() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        let first = try store.liveData("first", default: 0)
        let second = try store.liveData("second", default: 0)
        try first.set(1)
        #expect(throws: Abort.self) {
          try store.transaction {
            try first.set(2)
            try second.set(2)
            throw Abort()
          }
        }
        try store.close()
      }
      let store = try PersistentStore(path: path)
      let first = try store.liveData("first", default: 0)
      let second = try store.liveData("second", default: 0)
      #expect(first.value == 1)
      #expect(first.version == 1)
      #expect(second.version == 0)
      #expect(try store.keys() == ["first"])
    }

    @Test func failingSetInsideBodyRollsBackTheEarlierSets() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      let reading = try store.liveData("reading", default: Reading(value: 0))
      try count.set(1)
      #expect(throws: (any Error).self) {
        try store.transaction {
          try count.set(2)
          try reading.set(Reading(value: .nan))
        }
      }
      #expect(count.value == 1)
      #expect(count.version == 1)
      #expect(try count.history().map(\.version) == [1])
      try count.set(3)
      #expect(count.version == 2)
    }

    @Test func successfulBodyCommitsBothAndNotifiesOnlyAfterTheCommit() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let from = try store.liveData("from", default: 100)
      let to = try store.liveData("to", default: 0)
      try from.set(100)
      // The observers' calls and the end of the body, in the order they happened.
      let calls = DeliveryRecorder<String>()
      let fromObserver = from.observeForever(receiveCurrent: false) { value in
        // Both writes are committed when anyone hears of either.
        let toNewest = (try? to.history(limit: 1).first?.value) ?? nil
        calls.record("from=\(value) to.stored=\(toNewest ?? -1)")
      }
      let toObserver = to.observeForever(receiveCurrent: false) { value in
        let fromNewest = (try? from.history(limit: 1).first?.value) ?? nil
        calls.record("to=\(value) from.stored=\(fromNewest ?? -1)")
      }
      defer {
        fromObserver.cancel()
        toObserver.cancel()
      }

      try store.transaction {
        try from.update { $0 -= 10 }
        try to.update { $0 += 10 }
        calls.record("body end: from=\(from.value) v\(from.version), to=\(to.value) v\(to.version)")
      }

      // The order in which two live data are notified is not specified; that each is, after the commit, is.
      let events = calls.takePending()
      #expect(events.first == "body end: from=100 v1, to=0 v0", "value and version change only at the commit")
      #expect(
        Set(events.dropFirst()) == ["from=90 to.stored=10", "to=10 from.stored=90"] && events.count == 3,
        "each observer is called once, after both writes are committed: \(events)")
      #expect(from.value == 90)
      #expect(from.version == 2)
      #expect(to.value == 10)
      #expect(to.version == 1)

      try store.close()
      let reopened = try PersistentStore(path: path)
      #expect(try reopened.liveData("from", default: 0).value == 90)
      #expect(try reopened.liveData("to", default: 0).version == 1)
    }

    @Test func committedTransactionIsVisibleToAnotherConnection() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let first = try store.liveData("first", default: 0)
      let second = try store.liveData("second", default: 0)
      try store.transaction {
        try first.set(1)
        try second.set(2)
        try first.set(3)
      }
      #expect(first.value == 3)
      #expect(first.version == 2)
      #expect(second.version == 1)
      #expect(try first.history().map(\.value) == [3, 1])
      if SQLiteCLI.isAvailable {
        let rows = try SQLiteCLI.query(
          path, "SELECT key || ':' || version FROM pld_values ORDER BY key, version")
        #expect(rows.split(separator: "\n") == ["first:1", "first:2", "second:1"])
      }
    }

    @Test func updateInsideBodySeesEarlierWritesOfTheBody() throws {
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      try store.transaction {
        try count.update { $0 += 1 }
        try count.update { $0 += 1 }
        try count.update { $0 += 1 }
      }
      #expect(count.value == 3)
      #expect(count.version == 3)
      #expect(try count.history().map(\.value) == [3, 2, 1])
    }

    /// A nested transaction that throws is undone for the reads after it too: the outer body's next read
    /// sees the value written before the nested one, not the one the nested transaction wrote.
    @Test func aReadAfterARolledBackNestedTransactionSeesTheWritesBeforeIt() throws {
      struct Refused: Error {}
      let folder = try TemporaryDirectory()
      let store = try PersistentStore(path: folder.path("store.db"))
      let count = try store.liveData("count", default: 0)
      try store.transaction {
        try count.set(1)
        try count.update { $0 += 1 }  // reads the 1 written above
        #expect(throws: Refused.self) {
          try store.transaction {
            try count.update { $0 += 100 }
            throw Refused()
          }
        }
        try count.update { $0 += 10 }
      }
      #expect(count.value == 12)
      #expect(try count.history().map(\.value) == [12, 2, 1])
    }
  }
}
