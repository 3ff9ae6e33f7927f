import Foundation

/// The small value of the `set` benchmarks: a user profile whose JSON is about 115 bytes.
struct Profile: Codable, Sendable, Equatable {
  var id: Int
  var name: String
  var email: String
  var isActive: Bool
  var score: Double
  var tags: [String]

  /// A profile that differs from its neighbours, so every write encodes a different value.
  /// The key of the `index`th profile in the stores the restore and open groups write.
  static func key(_ index: Int) -> String { "profile.\(index)" }

  static func sample(_ index: Int) -> Profile {
    Profile(
      id: 100_000 + index, name: "Ada Lovelace", email: "ada.l@example.com",
      isActive: index.isMultiple(of: 2), score: 90 + Double(index % 100) / 10, tags: ["admin", "beta"])
  }

  /// The same fields as a Foundation property list, for `JSONSerialization` (the encoding benchmark).
  var jsonObject: [String: Any] {
    ["id": id, "name": name, "email": email, "isActive": isActive, "score": score, "tags": tags]
  }
}

/// The large value: a catalog of profiles, about 10 KB of JSON, where encoding dominates a write.
struct Catalog: Codable, Sendable, Equatable {
  var revision: Int
  var title: String
  var entries: [Profile]

  static func sample(_ index: Int) -> Catalog {
    Catalog(
      revision: index, title: "Team directory",
      entries: (0..<82).map { Profile.sample(index &* 131 &+ $0) })
  }

  /// The same fields as a Foundation property list, for `JSONSerialization` (the encoding benchmark).
  var jsonObject: [String: Any] {
    ["revision": revision, "title": title, "entries": entries.map(\.jsonObject)]
  }
}

/// Values prepared before timing starts, cycled through by the writers.
struct ValueCycle<Value> {
  private let values: [Value]
  private var next = 0

  init(count: Int = 64, _ make: (Int) -> Value) {
    values = (0..<max(1, count)).map(make)
  }

  mutating func take() -> Value {
    defer { next = (next + 1) % values.count }
    return values[next]
  }

  /// The size of the first value as the library stores it (sorted-keys JSON).
  func encodedSize() -> Int where Value: Encodable {
    (try? RawVersionedStore.makeEncoder().encode(values[0]).count) ?? 0
  }
}

extension ValueCycle: Sendable where Value: Sendable {}
