import Foundation
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

/// The store's JSON encoder writes exactly the bytes Foundation's `JSONEncoder` writes with the store's
/// settings, and declines (nil) what only `JSONEncoder` does; `ValueCodec` then gives JSONEncoder's bytes
/// or error.
@Suite struct JSONTextEncoderTests {
  static func foundation<Value: Encodable>(_ value: Value) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(value)
  }

  static func expectSameBytes<Value: Encodable>(
    _ value: Value, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let expected = try foundation(value)
    let text = try JSONTextEncoder.encode(value)
    #expect(
      text == expected,
      "\(text.map { String(decoding: $0, as: UTF8.self) } ?? "nil") != \(String(decoding: expected, as: UTF8.self))",
      sourceLocation: sourceLocation)
    #expect(try ValueCodec.encode(value, key: "k") == expected, sourceLocation: sourceLocation)
  }

  struct Profile: Codable {
    var id: Int
    var name: String
    var email: String?
    var isActive: Bool
    var score: Double
    var tags: [String]
  }

  enum Shape: Codable {
    case circle(radius: Double)
    case polygon([Int], label: String?)
    case empty
  }

  struct Everything: Codable {
    var int8 = Int8.min, int16 = Int16.max, int32 = Int32.min, int64 = Int64.max, uint = UInt.max
    var uint8 = UInt8.max, uint16 = UInt16.max, uint32 = UInt32.max, uint64 = UInt64.max
    var float: Float = 0.1
    var floats: [Float] = [1e10, 3, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
    var doubles: [Double] = [
      90, 90.1, -0.0, 1e16, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1 + 0.2, 1e15,
    ]
    var date = Date(timeIntervalSinceReferenceDate: 5.5)
    var data = Data([0, 1, 2, 250, 255])
    var url = URL(string: "https://example.com/a/b?c=d&e=f")
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    var nested: [[String: [Int?]]] = [["b": [1, nil], "a": []], [:]]
    var intKeys: [Int: String] = [10: "ten", 2: "two", -1: "minus one", 100: "hundred"]
    var shapes: [Shape] = [
      .circle(radius: 2.5), .polygon([1, 2], label: nil), .polygon([], label: "x"), .empty,
    ]
    var optionalNil: String? = nil
    var set: Set<String> = ["x", "y", "z"]
  }

  @Test func writesWhatJSONEncoderWritesForCommonValues() throws {
    try Self.expectSameBytes(
      Profile(id: 1, name: "Ada", email: nil, isActive: true, score: 90.5, tags: ["admin", "beta"]))
    try Self.expectSameBytes(
      Profile(id: -7, name: "", email: "a/b@example.com", isActive: false, score: 0, tags: []))
    try Self.expectSameBytes(Everything())
    try Self.expectSameBytes([Everything(), Everything()])
  }

  @Test func writesTopLevelScalarsAndSpecialTypes() throws {
    try Self.expectSameBytes(0)
    try Self.expectSameBytes(-42)
    try Self.expectSameBytes("light")
    try Self.expectSameBytes(true)
    try Self.expectSameBytes(2.50)
    try Self.expectSameBytes(String?.none)
    try Self.expectSameBytes([String]())
    try Self.expectSameBytes([String: Int]())
    try Self.expectSameBytes(Data([1, 2, 3]))
    try Self.expectSameBytes(URL(string: "http://a/b"))
    try Self.expectSameBytes(Date(timeIntervalSince1970: 0))
  }

  @Test func escapesStringsAsJSONEncoderDoes() throws {
    var every = ""
    for scalar in 0..<0x80 { every.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
    every += "\u{2028}\u{2029}é😀\u{7F}\u{80}\u{AD}\u{FEFF}e\u{301}"
    try Self.expectSameBytes(every)
    try Self.expectSameBytes([every: every])
    try Self.expectSameBytes(["quote\"": "back\\slash", "slash/": "tab\t", "nul\u{0}": "\u{1F}"])
  }

  @Test func sortsKeysAsJSONEncoderDoes() throws {
    let keys = [
      "b", "B", "a10", "a2", "_x", "Z", "a", "A", "é", "\u{301}e", "f", "a-b", "a_b", "aB", "ab", "Ab", "1",
      "10", "2", "", "x1y", "x01y", "ß", "ss", "😀", "~", " ",
    ]
    try Self.expectSameBytes(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
  }

  /// A value written through a hand-made `encode(to:)`: a key encoded twice, nested containers kept and
  /// written after their siblings, a container asked for twice.
  struct HandWritten: Encodable {
    enum Key: String, CodingKey { case a, b, c, z }
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .z)
      var nested = container.nestedContainer(keyedBy: Key.self, forKey: .b)
      var list = container.nestedUnkeyedContainer(forKey: .c)
      try container.encode("first", forKey: .a)
      try container.encode("second", forKey: .a)
      try nested.encode(true, forKey: .a)
      try list.encode(3)
      var inner = list.nestedContainer(keyedBy: Key.self)
      try list.encodeNil()
      try inner.encode(2.5, forKey: .c)
      var again = encoder.container(keyedBy: Key.self)
      try again.encode([1, 2], forKey: .c)
    }
  }

  /// More members than the encoder sorts by insertion, in reverse order, two keys encoded twice.
  struct ManyKeysSomeTwice: Encodable {
    struct Key: CodingKey {
      let stringValue: String
      init(_ name: String) { stringValue = name }
      init?(stringValue: String) { self.stringValue = stringValue }
      var intValue: Int? { nil }
      init?(intValue: Int) { nil }
    }
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Key.self)
      for index in (0..<40).reversed() { try container.encode(index, forKey: Key("k\(index)")) }
      try container.encode("again", forKey: Key("k7"))
      try container.encode([1], forKey: Key("k31"))
      try container.encode("third", forKey: Key("k7"))
    }
  }

  struct EncodesNothingInside: Encodable {
    struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
    var nothing = Nothing()
    var list = [Nothing(), Nothing()]
  }

  @Test func handWrittenEncodingsMatchJSONEncoder() throws {
    try Self.expectSameBytes(HandWritten())
    try Self.expectSameBytes(ManyKeysSomeTwice())
    try Self.expectSameBytes(EncodesNothingInside())
  }

  class Base: Encodable {
    var base = 1
  }

  final class Derived: Base, @unchecked Sendable {
    var derived = 2
    enum Key: CodingKey { case derived }
    override func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(derived, forKey: .derived)
      try super.encode(to: container.superEncoder())
    }
  }

  struct Throws: Encodable {
    struct Refused: Error {}
    func encode(to encoder: any Encoder) throws { throw Refused() }
  }

  struct NothingAtAll: Encodable { func encode(to encoder: any Encoder) throws {} }

  /// Every type the encoder writes without a container of its own — the standard scalars and arrays of
  /// them — as fields, nested in arrays, and at the top level, byte for byte as JSONEncoder writes them;
  /// a non-finite number inside such an array still goes to JSONEncoder.
  struct Standard: Encodable {
    var string = "é\n\"x/"
    var int = -42
    var double = 0.1
    var bool = true
    var int64 = Int64.min
    var strings = ["b", "", "a"]
    var ints = [1, -2, Int.max]
    var doubles = [1.5, -0.0, 1e300, 100]
    var bools = [true, false]
    var nested = [["a"], [], ["b", "c"]]
    var empty: [String] = []
  }

  @Test func writesStandardScalarsAndArraysOfThemAsJSONEncoderDoes() throws {
    try Self.expectSameBytes(Standard())
    try Self.expectSameBytes(["x", "y"])
    try Self.expectSameBytes([Int]())
    try Self.expectSameBytes([true])
    try Self.expectSameBytes([2.5, 3])
    try Self.expectSameBytes(Int64.max)
    try Self.expectSameBytes(["k": [1, 2]])
    var infinite = Standard()
    infinite.doubles = [1, .infinity]
    #expect(try JSONTextEncoder.encode(infinite) == nil)
    #expect(throws: PersistentLiveDataError.self) { try ValueCodec.encode(infinite, key: "k") }
  }

  @Test func declinesWhatOnlyJSONEncoderWrites() throws {
    #expect(try JSONTextEncoder.encode(Derived()) == nil)
    try #expect(ValueCodec.encode(Derived(), key: "k") == Self.foundation(Derived()))
    #expect(try JSONTextEncoder.encode(["price": Decimal(string: "1.10")]) == nil)
    try #expect(
      ValueCodec.encode(["price": Decimal(string: "1.10")], key: "k")
        == Self.foundation(["price": Decimal(string: "1.10")]))
    #expect(try JSONTextEncoder.encode([1.0, .nan]) == nil)
    #expect(try JSONTextEncoder.encode(["x": Double.infinity]) == nil)
    #expect(try JSONTextEncoder.encode(Throws()) == nil)
    #expect(try JSONTextEncoder.encode(NothingAtAll()) == nil)
  }

  @Test func errorsAreJSONEncodersErrors() {
    #expect {
      try ValueCodec.encode(["x": Double.nan], key: "score")
    } throws: { error in
      guard case PersistentLiveDataError.encodingFailed(let key, let reason) = error else { return false }
      return key == "score" && reason.hasPrefix("invalid value at x: ")
    }
    #expect(throws: PersistentLiveDataError.self) { try ValueCodec.encode(Throws(), key: "k") }
    #expect(throws: PersistentLiveDataError.self) { try ValueCodec.encode(NothingAtAll(), key: "k") }
  }

  /// A JSON-shaped value made at random: the keys, strings and numbers JSON can hold.
  indirect enum Tree: Encodable {
    case object([String: Tree])
    case array([Tree])
    case string(String)
    case double(Double)
    case int(Int64)
    case bool(Bool)
    case null

    func encode(to encoder: any Encoder) throws {
      var single = encoder.singleValueContainer()
      switch self {
      case .object(let members): try single.encode(members)
      case .array(let elements): try single.encode(elements)
      case .string(let string): try single.encode(string)
      case .double(let double): try single.encode(double)
      case .int(let int): try single.encode(int)
      case .bool(let bool): try single.encode(bool)
      case .null: try single.encodeNil()
      }
    }

    static func random(depth: Int, using generator: inout some RandomNumberGenerator) -> Tree {
      switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &generator) {
      case 0: return .string(randomText(using: &generator))
      case 1:
        var double: Double
        repeat {
          double = Double(bitPattern: UInt64.random(in: .min ... .max, using: &generator))
        } while !double.isFinite
        return .double(Bool.random(using: &generator) ? double : Double(Int.random(in: -999...999)) / 8)
      case 2: return .int(Int64.random(in: .min ... .max, using: &generator))
      case 3: return .bool(Bool.random(using: &generator))
      case 4: return .null
      case 5:
        return .array(
          (0..<Int.random(in: 0...4, using: &generator)).map { _ in
            random(depth: depth - 1, using: &generator)
          })
      default:
        var members: [String: Tree] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &generator) {
          members[randomText(using: &generator)] = random(depth: depth - 1, using: &generator)
        }
        return .object(members)
      }
    }

    static func randomText(using generator: inout some RandomNumberGenerator) -> String {
      let pool = Array("aAbBzZ09_-/\\\" \t\n\u{0}\u{1F}\u{7F}éß😀\u{301}".unicodeScalars)
      var text = ""
      for _ in 0..<Int.random(in: 0...6, using: &generator) {
        text.unicodeScalars.append(pool[Int.random(in: 0..<pool.count, using: &generator)])
      }
      return text
    }
  }

  @Test func randomValuesMatchJSONEncoderByteForByte() throws {
    var generator = SeededGenerator(seed: 0x5EED_1234)
    // Fewer under a sanitizer, which makes codec code many times slower (the loop took 62 s under TSan).
    for _ in 0..<(Reliability.underSanitizer ? 200 : 1_500) {
      try Self.expectSameBytes(Tree.random(depth: 3, using: &generator))
    }
  }

  /// Records the encoders it is encoded with, weakly.
  private final class EncoderWitness: @unchecked Sendable {
    private var encoders: [() -> AnyObject?] = []
    func record(_ encoder: any Encoder) {
      weak let object = encoder as AnyObject
      encoders.append { object }
    }
    var alive: Int { encoders.filter { $0() != nil }.count }
  }

  private struct Leaf: Encodable {
    let witness: EncoderWitness
    func encode(to encoder: any Encoder) throws {
      witness.record(encoder)
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(1, forKey: .value)
    }
    enum CodingKeys: CodingKey { case value }
  }

  private struct Branch: Encodable {
    let witness: EncoderWitness
    func encode(to encoder: any Encoder) throws {
      witness.record(encoder)
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(Leaf(witness: witness), forKey: .leaf)
      try container.encode([Leaf(witness: witness), Leaf(witness: witness)], forKey: .leaves)
    }
    enum CodingKeys: CodingKey { case leaf, leaves }
  }

  @Test func encodingNestedValuesKeepsNoEncoderAlive() throws {
    let witness = EncoderWitness()
    let text = try #require(try JSONTextEncoder.encode(Branch(witness: witness)))
    #expect(
      String(decoding: text, as: UTF8.self) == #"{"leaf":{"value":1},"leaves":[{"value":1},{"value":1}]}"#)
    #expect(witness.alive == 0, "every encoder is freed once the text is written")
    _ = try ValueCodec.encode(Branch(witness: witness), key: "k")
    #expect(witness.alive == 0)
  }
}
