import Foundation
import PLDTestSupport
import PersistentLiveDataTesting
import Testing

@testable import PersistentLiveData

struct Todo: Codable, Sendable, Equatable {
  var title: String
  var done = false
}

/// Collections (the Collections article): members are ordinary keys `NAME/ID`, one live dictionary.
@Suite struct CollectionTests {
  @Test func membersAreOrdinaryKeysAndTheDictionaryFollowsEveryWrite() throws {
    let store = try PersistentStore.inMemory()
    let todos = try store.collection("todo", of: Todo.self)
    #expect(todos.value.isEmpty && todos.version == 0 && todos.ids.isEmpty)

    try todos.set(Todo(title: "Milk"), for: "milk")
    try todos.set(Todo(title: "Bread"), for: "bread")
    #expect(todos.value == ["milk": Todo(title: "Milk"), "bread": Todo(title: "Bread")])
    #expect(todos.ids == ["bread", "milk"])
    #expect(todos["milk"] == Todo(title: "Milk") && todos["eggs"] == nil)
    #expect(todos.version == 2, "one collection version per commit")

    // An ordinary key: liveData, history and keys see it; a write through it is in the collection.
    let milk = try store.liveData("todo/milk", default: Todo(title: ""))
    #expect(milk.value == Todo(title: "Milk") && milk.version == 1)
    try milk.update { $0.done = true }
    #expect(todos["milk"] == Todo(title: "Milk", done: true))
    try todos.update("milk", default: Todo(title: "?")) { $0.title = "Oat milk" }
    #expect(milk.value == Todo(title: "Oat milk", done: true) && milk.version == 3)
    #expect(try milk.history().map(\.version) == [3, 2, 1])
    #expect(try store.keys(prefix: "todo/") == ["todo/bread", "todo/milk"])

    // member(_:default:) is the store's own live value of the key.
    #expect(try todos.member("milk", default: Todo(title: "")) === milk)

    // update of a new member starts from the default.
    let written = try todos.update("eggs", default: Todo(title: "Eggs")) { $0.done = true }
    #expect(written == Todo(title: "Eggs", done: true) && todos["eggs"] == written)

    try todos.remove("bread")
    #expect(todos.ids == ["eggs", "milk"])
    #expect(try store.keys(prefix: "todo/") == ["todo/eggs", "todo/milk"])
    try todos.remove("never-there")  // nothing to remove: nothing changes
    #expect(todos.ids == ["eggs", "milk"])
  }

  @Test func oneInstancePerNameAndAnotherElementTypeThrows() throws {
    let store = try PersistentStore.inMemory()
    let todos = try store.collection("todo", of: Todo.self)
    #expect(try store.collection("todo", of: Todo.self) === todos)
    #expect(throws: PersistentLiveDataError.self) { try store.collection("todo", of: Int.self) }
    #expect(throws: PersistentLiveDataError.self) { try store.collection("", of: Int.self) }
    #expect(throws: PersistentLiveDataError.self) { try todos.set(Todo(title: "x"), for: "") }
    #expect(todos.value.isEmpty, "a refused id wrote nothing")
  }

  @Test func idsAreBytesSlashesIncludedAndSortedByUTF8() throws {
    let store = try PersistentStore.inMemory()
    let numbers = try store.collection("n", of: Int.self)
    let nfc = "caf\u{E9}"
    let nfd = "cafe\u{301}"
    let ids = ["a/b", "a", "Z", "\u{1}control", nfc, nfd, "with\u{0}nul", "\u{1F600}", "\u{FFFF}"]
    for (index, id) in ids.enumerated() { try numbers.set(index, for: id) }
    #expect(numbers.ids.count == ids.count, "canonically equivalent spellings are two members")
    #expect(numbers[nfc] == 4 && numbers[nfd] == 5)
    #expect(numbers.value.count == ids.count - 1, "and one entry of a Swift dictionary")
    #expect(numbers.value[nfc] == 5, "the one written last")
    try numbers.remove(nfd)
    #expect(numbers.value[nfc] == 4 && numbers.ids.count == ids.count - 1, "the other spelling shows again")
    try numbers.set(5, for: nfd)
    let byBytes = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    #expect(numbers.ids == byBytes)
    #expect(try store.keys(prefix: "n/") == byBytes.map { "n/" + $0 })
    #expect(try store.liveData("n/a/b", default: -1).value == 0, "todo/a/b is the id a/b")

    // A key that only starts like the name is not a member; nor is "n/" itself.
    try store.liveData("nx", default: 0).set(1)
    try store.liveData("n/", default: 0).set(1)
    try store.liveData("n0", default: 0).set(1)
    #expect(numbers.ids.count == ids.count)
  }

  @Test func idsNearTheKeyLimitAreMembersAndOverItAreRefused() throws {
    let store = try PersistentStore.inMemory()
    let numbers = try store.collection("big", of: Int.self)
    let limit = 1 << 20
    let longest = String(repeating: "x", count: limit - "big/".utf8.count)
    try numbers.set(1, for: longest)
    #expect(numbers[longest] == 1)
    #expect(throws: PersistentLiveDataError.self) { try numbers.set(2, for: longest + "x") }
    #expect(numbers.value.count == 1)
  }

  @Test func aFileStoreReopensTheCollectionFromItsMembersOnly() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    do {
      let store = try PersistentStore(path: path)
      let todos = try store.collection("todo", of: Todo.self)
      for index in 0..<50 { try todos.set(Todo(title: "t\(index)"), for: "\(index)") }
      try todos.remove("7")
      // Neighbours of the range, and a key that does not decode as a Todo: never read by the open.
      try store.liveData("todn", default: 0).set(1)
      try store.liveData("todo0", default: 0).set(1)
      try store.liveData("todo", default: 0).set(1)
      try store.close()
    }
    let store = try PersistentStore(path: path)
    let todos = try store.collection("todo", of: Todo.self)
    #expect(todos.value.count == 49 && todos["7"] == nil && todos["8"] == Todo(title: "t8"))
    #expect(todos.ids == (0..<50).filter { $0 != 7 }.map(String.init).sorted())
  }

  @Test func aTransactionIsOneCollectionVersionWithPlainKeys() async throws {
    let store = try PersistentStore.inMemory()
    let todos = try store.collection("todo", of: Todo.self)
    let counters = try store.collection("count", of: Int.self)
    let total = try store.liveData("total", default: 0)
    let before = todos.version
    try store.transaction {
      try todos.set(Todo(title: "a"), for: "a")
      try todos.set(Todo(title: "b"), for: "b")
      try counters.set(2, for: "todo")
      try total.set(2)
      // Inside, an update sees what the transaction wrote.
      try todos.update("a", default: Todo(title: "?")) { $0.done = true }
      #expect(todos["a"] == nil, "memory moves at the commit")
    }
    #expect(todos.version == before + 1)
    #expect(todos.value == ["a": Todo(title: "a", done: true), "b": Todo(title: "b")])
    #expect(counters.value == ["todo": 2] && counters.version == 1 && total.value == 2)

    // A transaction that throws changes nothing, in memory or in the file.
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try store.transaction {
        try todos.set(Todo(title: "c"), for: "c")
        throw Stop()
      }
    }
    #expect(todos.version == before + 1 && todos["c"] == nil)
    #expect(try store.keys(prefix: "todo/") == ["todo/a", "todo/b"])
  }

  @Test @MainActor func observersSeeOneCollectionVersionPerTransaction() async throws {
    let store = try PersistentStore.inMemory()
    let todos = try store.collection("todo", of: Todo.self)
    let seen = Locked<[Int]>([])
    let owner = PlainOwner()
    todos.observe(owner: owner) { members in seen.withLock { $0.append(members.count) } }
    try store.transaction {
      for id in ["a", "b", "c"] { try todos.set(Todo(title: id), for: id) }
    }
    try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0.last == 3 } }
    #expect(seen.withLock { $0 } == [0, 3], "the current value, then the transaction as one")
    withExtendedLifetime(owner) {}
  }

  /// As for a live value's own writes: a write on the main actor calls the observers before it returns.
  @Test @MainActor func onTheMainActorObserversAreCalledBeforeTheWriteReturns() throws {
    let store = try PersistentStore.inMemory()
    let todos = try store.collection("todo", of: Todo.self)
    let seen = Locked<[Int]>([])
    let owner = PlainOwner()
    todos.observe(owner: owner, receiveCurrent: false) { members in seen.withLock { $0.append(members.count) }
    }
    try todos.set(Todo(title: "a"), for: "a")
    #expect(seen.withLock { $0 } == [1])
    try todos.update("a", default: Todo(title: "")) { $0.done = true }
    #expect(seen.withLock { $0 } == [1, 1])
    try todos.remove("a")
    #expect(seen.withLock { $0 } == [1, 1, 0])
    try store.liveData("todo/b", default: Todo(title: "")).set(Todo(title: "b"))
    #expect(seen.withLock { $0 } == [1, 1, 0, 1], "a member written through its own live value")
    try store.transaction { try todos.set(Todo(title: "c"), for: "c") }
    #expect(seen.withLock { $0 } == [1, 1, 0, 1, 2], "and a transaction's commit")
    withExtendedLifetime(owner) {}
  }

  @Test @MainActor func anObservedCollectionNobodyKeepsStillDelivers() async throws {
    let store = try PersistentStore.inMemory()
    let seen = Locked(0)
    let owner = PlainOwner()
    try store.collection("todo", of: Todo.self).observe(owner: owner) { members in
      seen.withLock { $0 = members.count }
    }
    try store.collection("todo", of: Todo.self).set(Todo(title: "x"), for: "x")
    try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0 } == 1 }
    withExtendedLifetime(owner) {}
  }

  @Test func anUndecodableMemberFollowsThePolicyAndNamesItsKey() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("a.db")
    do {
      let store = try PersistentStore(path: path)
      let numbers = try store.collection("n", of: Int.self)
      try numbers.set(1, for: "good")
      try numbers.set(2, for: "bad")
      try store.close()
    }
    // Version 2 of n/bad, written by another program, is no Int.
    try SQLiteCLI.execute(
      path,
      "INSERT INTO pld_values (key, version, written_at, payload, schema_version) VALUES ('n/bad', 2, 0, '\"text\"', 1)"
    )
    let error = #expect(throws: PersistentLiveDataError.self) {
      _ = try PersistentStore(path: path).collection("n", of: Int.self)
    }
    guard case .undecodable(let key, let version, _) = error else {
      Issue.record("expected undecodable, got \(String(describing: error))")
      return
    }
    #expect(key == "n/bad" && version == 2)
    let lenient = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .lastDecodable))
    #expect(try lenient.collection("n", of: Int.self).value == ["good": 1, "bad": 2])
    try lenient.close()
    let skipping = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
    let numbers = try skipping.collection("n", of: Int.self)
    #expect(numbers.value == ["good": 1], "left out, reported")
    // An update goes on above the version that does not decode.
    try numbers.update("bad", default: 0) { $0 += 10 }
    #expect(numbers["bad"] == 10)
    #expect(try skipping.liveData("n/bad", default: 0).version == 3)
  }

  @Test func keysByPrefixReadTheRangeInByteOrder() throws {
    let store = try PersistentStore.inMemory()
    for key in ["a", "ab", "ab/c", "abc", "b", "a\u{10FFFF}", "\u{10FFFF}x"] {
      try store.liveData(key, default: 0).set(1)
    }
    #expect(try store.keys(prefix: "ab") == ["ab", "ab/c", "abc"])
    #expect(try store.keys(prefix: "a") == ["a", "ab", "ab/c", "abc", "a\u{10FFFF}"])
    #expect(try store.keys(prefix: "\u{10FFFF}") == ["\u{10FFFF}x"])
    #expect(try store.keys(prefix: "") == store.keys())
    #expect(try store.keys(prefix: "zz").isEmpty)
    try store.removeKey("ab/c")
    #expect(try store.keys(prefix: "ab") == ["ab", "abc"])
  }

  @Test func upperBoundsFollowByteOrder() {
    #expect(MemberKey.upperBound(of: "todo/") == "todo0")
    #expect(MemberKey.upperBound(of: "a\u{D7FF}") == "a\u{E000}")
    #expect(MemberKey.upperBound(of: "a\u{10FFFF}") == "b")
    #expect(MemberKey.upperBound(of: "\u{10FFFF}\u{10FFFF}") == nil)
    #expect(MemberKey.id(of: "todo/a/b", prefix: "todo/") == "a/b")
    #expect(MemberKey.id(of: "todo/", prefix: "todo/") == nil)
    #expect(MemberKey.id(of: "todox", prefix: "todo/") == nil)
  }
}
