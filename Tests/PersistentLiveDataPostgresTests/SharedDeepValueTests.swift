import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import Testing

/// Arrays (or objects with one member "child") nested `depth` levels deep, made while encoding: the
/// value itself is two fields, so making and dropping one 100,000 levels deep takes no recursion.
struct SharedNest: Codable, Sendable, Equatable {
  var depth: Int
  var objects: Bool

  private enum CodingKeys: String, CodingKey { case child }

  init(depth: Int, objects: Bool) {
    self.depth = depth
    self.objects = objects
  }

  func encode(to encoder: any Encoder) throws {
    let child = SharedNest(depth: depth - 1, objects: objects)
    if objects {
      var container = encoder.container(keyedBy: CodingKeys.self)
      if depth > 1 { try container.encode(child, forKey: .child) }
    } else {
      var container = encoder.unkeyedContainer()
      if depth > 1 { try container.encode(child) }
    }
  }

  init(from decoder: any Decoder) throws {
    if let container = try? decoder.container(keyedBy: CodingKeys.self) {
      objects = true
      depth = (try container.decodeIfPresent(SharedNest.self, forKey: .child)?.depth ?? 0) + 1
    } else {
      var container = try decoder.unkeyedContainer()
      objects = false
      depth = container.isAtEnd ? 1 : try container.decode(SharedNest.self).depth + 1
    }
  }
}

/// A shared store refuses a value nested deeper than `JSONDecoder` reads (512 levels) before anything
/// reaches the server, as an SQLite store does — 100,000 levels included, without a crash.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedDeepValueTests {
  @Test func aValueAtTheLimitIsSharedAndDeeperOnesAreRefusedBeforeTheServer() async throws {
    let fixture = try await SharedFixture()
    let a = fixture.replica()
    for objects in [false, true] {
      let key = objects ? "objects" : "arrays"
      let data = try await a.store.liveData(key, default: SharedNest(depth: 1, objects: objects))
      try await data.set(SharedNest(depth: 512, objects: objects))
      for depth in [513, 100_000] {
        await #expect(throws: PersistentLiveDataError.valueTooDeep(key: key, depth: 513)) {
          try await data.set(SharedNest(depth: depth, objects: objects))
        }
        await #expect(throws: PersistentLiveDataError.valueTooDeep(key: key, depth: 513)) {
          try await data.update { $0 = SharedNest(depth: depth, objects: objects) }
        }
        await #expect(throws: PersistentLiveDataError.valueTooDeep(key: key, depth: 513)) {
          try await a.store.transaction { transaction in
            try transaction.set(data, to: SharedNest(depth: depth, objects: objects))
          }
        }
      }
      #expect(data.version == 1)
      #expect(data.value == SharedNest(depth: 512, objects: objects))
    }
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "2")
    // Another replica reads the values at the limit back.
    let b = fixture.replica()
    let arrays = try await b.store.liveData("arrays", default: SharedNest(depth: 1, objects: false))
    let objects = try await b.store.liveData("objects", default: SharedNest(depth: 1, objects: true))
    #expect(arrays.value == SharedNest(depth: 512, objects: false))
    #expect(objects.value == SharedNest(depth: 512, objects: true))
    await a.shutDown()
    await b.shutDown()
  }
}
