import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataPostgres

/// One way a commit reaches memory, on a shared store as on a file: `set`, a transaction and a
/// collection's write hand the key's live value the version with the value written, which it takes as
/// it is (never decoding it), and a main-actor writer's observers hear of it before the write returns.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedCommittedWriteTests {
  /// A value that counts how often it is decoded.
  struct Card: Codable, Sendable, Equatable {
    static let decodes = Locked(0)
    var number: Int
    init(number: Int) { self.number = number }
    init(from decoder: any Decoder) throws {
      number = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .number)
      Self.decodes.withLock { $0 += 1 }
    }
  }

  @MainActor
  @Test func setTransactionsAndMemberWritesMoveLiveValuesWithoutDecodingBeforeTheyReturn() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    let card = try await a.store.liveData("card", default: Card(number: 0))
    let deck = try await a.store.collection("deck", of: Card.self)
    let member = try await a.store.liveData("deck/x", default: Card(number: 0))
    var seen: [Int] = []
    var memberSeen: [Int] = []
    let observer = card.observeForever(receiveCurrent: false) { seen.append($0.number) }
    let memberObserver = member.observeForever(receiveCurrent: false) { memberSeen.append($0.number) }
    defer {
      observer.cancel()
      memberObserver.cancel()
    }
    let decodedBefore = Card.decodes.withLock { $0 }

    try await card.set(Card(number: 1))
    #expect(seen == [1] && card.version == 1)
    try await deck.set(Card(number: 2), for: "x")
    #expect(memberSeen == [2] && member.value == Card(number: 2) && member.version == 1)
    try await a.store.transaction { transaction in
      try transaction.set(card, to: Card(number: 3))
      try transaction.set(Card(number: 4), for: "x", in: deck)
    }
    #expect(seen == [1, 3] && card.version == 2, "a transaction's writes, before it returned")
    #expect(memberSeen == [2, 4] && member.version == 2 && deck["x"] == Card(number: 4))
    try await a.store.transaction { transaction in
      try transaction.set(card, to: Card(number: 5), ifVersion: 2)
    }
    #expect(seen == [1, 3, 5] && card.version == 3)
    #expect(Card.decodes.withLock { $0 } == decodedBefore, "every value taken as written, never decoded")
    await a.shutDown()
  }
}

/// What a catch-up brings: the members one transaction wrote are one new version of a collection here
/// too, however the replica learnt of them.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedCatchUpVersionTests {
  struct Todo: Codable, Sendable, Equatable {
    var title: String
  }

  @MainActor
  @Test func aTransactionOfMembersCaughtUpByALookIsOneCollectionVersion() async throws {
    let fixture = try await SharedFixture()
    var options = PostgresStoreOptions()
    options.catchUpInterval = .seconds(3_600)  // no periodic look during the test
    let b = fixture.replica(options: options)
    let todos = try await b.store.collection("todo", of: Todo.self)
    try await Listeners.expectListening([b], fixture, "b listens before anyone writes")
    let delivered = Locked<[Int]>([])  // the member count of each delivery
    let observer = todos.observeForever(receiveCurrent: false) { members in
      delivered.withLock { $0.append(members.count) }
    }
    defer { observer.cancel() }
    let before = todos.version

    // A writer whose notifications the server refuses: nothing tells b of its transaction.
    var silent = fixture.configuration
    silent.username = try await fixture.roleWithTablePrivilegesOnly(canNotify: false)
    let writer = Replica(configuration: silent, options: options, listening: false)
    let written = try await writer.store.collection("todo", of: Todo.self)
    try await writer.store.transaction { transaction in
      try transaction.set(Todo(title: "milk"), for: "milk", in: written)
      try transaction.set(Todo(title: "bread"), for: "bread", in: written)
      try transaction.set(Todo(title: "eggs"), for: "eggs", in: written)
    }
    try await Task.sleep(for: .milliseconds(300))
    #expect(todos.value.isEmpty, "nothing told b yet")

    // A payload of a later release, which b cannot read: b looks at the server now.
    try await fixture.psql("SELECT pg_notify('pld_changes', E'pld-notify/3\\n{\"keys\":[]}')")
    #expect(await eventually(.seconds(30)) { todos.value.count == 3 }, "caught up")
    #expect(todos.version == before + 1, "three members of one transaction, one version")
    #expect(await eventually { !delivered.withLock { $0.isEmpty } })
    try await Task.sleep(for: .milliseconds(200))
    #expect(delivered.withLock { $0 } == [3], "one delivery, of the three")
    await writer.shutDown()
    await b.shutDown()
  }
}
