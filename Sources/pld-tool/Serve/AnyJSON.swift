import Foundation

/// Any JSON value, as a `Codable` type: how the inspector reads a shared store's values, whatever type
/// wrote them. Object members keep the order the decoder gives.
///
/// ```swift
/// let live = try await store.liveData(key, default: AnyJSON(.null))
/// let shown: JSONValue = live.value.json
/// ```
struct AnyJSON: Codable, Sendable, Equatable {
  var json: JSONValue

  init(_ json: JSONValue) { self.json = json }

  private struct Name: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  init(from decoder: any Decoder) throws {
    if let object = try? decoder.container(keyedBy: Name.self) {
      json = .object(
        try object.allKeys.map { .init($0.stringValue, try object.decode(AnyJSON.self, forKey: $0).json) })
      return
    }
    if var array = try? decoder.unkeyedContainer() {
      var elements: [JSONValue] = []
      while !array.isAtEnd { elements.append(try array.decode(AnyJSON.self).json) }
      json = .array(elements)
      return
    }
    let single = try decoder.singleValueContainer()
    if single.decodeNil() {
      json = .null
    } else if let value = try? single.decode(Bool.self) {
      json = .bool(value)
    } else if let value = try? single.decode(Int64.self) {
      json = .integer(value)
    } else if let value = try? single.decode(Double.self) {
      json = .number("\(value)")
    } else {
      json = .string(try single.decode(String.self))
    }
  }

  func encode(to encoder: any Encoder) throws {
    switch json {
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let value):
      var single = encoder.singleValueContainer()
      try single.encode(value)
    case .number(let text):
      var single = encoder.singleValueContainer()
      if let integer = Int64(text) {
        try single.encode(integer)
      } else {
        try single.encode(Double(text) ?? 0)
      }
    case .string(let text):
      var single = encoder.singleValueContainer()
      try single.encode(text)
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(AnyJSON(element)) }
    case .object(let members):
      var object = encoder.container(keyedBy: Name.self)
      for member in members {
        try object.encode(AnyJSON(member.value), forKey: Name(stringValue: member.key))
      }
    }
  }
}
