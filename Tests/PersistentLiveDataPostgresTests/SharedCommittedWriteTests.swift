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
