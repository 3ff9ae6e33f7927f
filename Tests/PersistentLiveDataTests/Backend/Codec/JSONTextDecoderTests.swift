import Foundation
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataBackend

/// The store's JSON decoder reads what `JSONDecoder` reads, and declines (nil) whatever it is not sure
/// of — never succeeding where `JSONDecoder` fails, never giving another value.
@Suite struct JSONTextDecoderTests {
  /// Checks the rule on `text`: when the fast decoder gives a value, JSONDecoder gives an equal one;
  /// when JSONDecoder fails, the fast decoder gives nil. Returns whether the fast path took it.
  @discardableResult
  static func expectAgreement<Value: Decodable & Equatable>(
    _ type: Value.Type, _ text: Data, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Bool {
    let fast = JSONTextDecoder.decode(type, from: text)
    let reference = try? JSONDecoder().decode(type, from: text)
    if let fast {
      #expect(
        reference == fast,
        "\(String(decoding: text, as: UTF8.self)): \(fast) against \(String(describing: reference))",
        sourceLocation: sourceLocation)
    }
    if reference == nil {
      #expect(
        fast == nil, "\(String(decoding: text, as: UTF8.self)): JSONDecoder fails",
        sourceLocation: sourceLocation)
    }
    return fast != nil
  }

  static func encoded<Value: Encodable>(_ value: Value) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(value)
  }

  enum Status: Codable, Equatable {
    case active(since: Date)
    case suspended(reason: String?)
    case deleted
  }

  enum Level: String, Codable { case low, high }

  struct Account: Codable, Equatable {
    var id: Int
    var name: String
    var email: String?
    var isActive: Bool
    var score: Double
    var tags: [String]
    var uuid: UUID
    var homepage: URL?
    var avatar: Data
    var created: Date
    var limits: [Int: Double]
    var nested: [String: [String: Bool?]]
    var status: [Status]
    var level: Level
    var small: Int8
    var big: UInt64
  }

  static func account(_ index: Int, text: String) -> Account {
    Account(
      id: index &* 7_919 - 50_000, name: text, email: index.isMultiple(of: 3) ? nil : "\(text)@example.com",
      isActive: index.isMultiple(of: 2), score: Double(index) / 7 - 3, tags: [text, "", "b"],
      uuid: UUID(), homepage: URL(string: "https://example.com/\(index)?q=\(index)"),
      avatar: Data((0..<(index % 9)).map { UInt8(truncatingIfNeeded: $0 &* 37) }),
      created: Date(timeIntervalSinceReferenceDate: Double(index) * 1_000.25),
      limits: [index + 1: 1.5, -index - 2: 1e300, 0: 0],
      nested: ["k\(text)": ["x": nil, "y": true], "a": [:]],
      status: [
        .active(since: Date(timeIntervalSince1970: Double(index))), .suspended(reason: text), .deleted,
      ],
      level: index.isMultiple(of: 5) ? .low : .high, small: Int8(truncatingIfNeeded: index),
      big: UInt64.max - UInt64(index))
  }

  @Test func readsWhatJSONEncoderWroteAsJSONDecoderDoes() throws {
    var generator = SeededGenerator(seed: 0xDEC0DE)
    // Fewer under a sanitizer, which makes codec code many times slower (the loop took 100 s under TSan).
    for index in 0..<(Reliability.underSanitizer ? 60 : 400) {
      let value = Self.account(index, text: JSONTextEncoderTests.Tree.randomText(using: &generator))
      let text = try Self.encoded(value)
      #expect(
        JSONTextDecoder.decode(Account.self, from: text) == value, "\(String(decoding: text, as: UTF8.self))")
      #expect(
        try ValueCodec.decode(Account.self, from: text, key: "k", version: 1, schemaVersion: 1) == value)
    }
  }

  @Test func readsScalarsAndCollectionsAtTheTopLevel() throws {
    #expect(JSONTextDecoder.decode(Int.self, from: Data("42".utf8)) == 42)
    #expect(JSONTextDecoder.decode(String.self, from: Data(#""dark""#.utf8)) == "dark")
    #expect(JSONTextDecoder.decode(Bool.self, from: Data(" true ".utf8)) == true)
    #expect(JSONTextDecoder.decode(Double.self, from: Data("-0.5e-3".utf8)) == -0.0005)
    #expect(JSONTextDecoder.decode(String?.self, from: Data("null".utf8)) == .some(nil))
    #expect(JSONTextDecoder.decode([[Int]].self, from: Data("[[],[1,-2],[3]]".utf8)) == [[], [1, -2], [3]])
    #expect(
      JSONTextDecoder.decode([String: Int].self, from: Data(#"{"b":1,"a":2}"#.utf8)) == ["a": 2, "b": 1])
    let many = Dictionary(uniqueKeysWithValues: (0..<50).map { ("key\($0)", $0) })
    #expect(try JSONTextDecoder.decode([String: Int].self, from: Self.encoded(many)) == many)
    #expect(
      JSONTextDecoder.decode(String.self, from: Data(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00\u0000""#.utf8))
        == "a\"b\\c/d\n\té😀\u{0}")
  }

  /// The text is checked as UTF-8 once, before parsing (an all-ASCII text by a plain scan): unescaped
  /// non-ASCII text reads as JSONDecoder reads it, in keys and values, and one invalid byte anywhere —
  /// in a key, a value, outside any string — sends the whole text to JSONDecoder.
  @Test func checksTheTextAsUTF8OnceWhereverItsBytesAre() throws {
    let text = #"{"名前":"Zoë 😀","ascii":"plain"}"#
    let expected = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    #expect(JSONTextDecoder.decode([String: String].self, from: Data(text.utf8)) == expected)
    #expect(expected["名前"] == "Zoë 😀")
    for invalid: [UInt8] in [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
      let inValue = Array(#"{"a":"x"#.utf8) + invalid + Array(#""}"#.utf8)
      let inKey = Array(#"{"a"#.utf8) + invalid + Array(#"":"x"}"#.utf8)
      let outside = Array(#"{"a":"x"} "#.utf8) + invalid
      for bytes in [inValue, inKey, outside] {
        #expect(JSONTextDecoder.decode([String: String].self, from: Data(bytes)) == nil, "\(bytes)")
        #expect(throws: (any Error).self) {
          try JSONDecoder().decode([String: String].self, from: Data(bytes))
        }
      }
    }
  }

  /// Inputs JSONDecoder refuses, or that only JSONDecoder should judge: the fast path declines them.
  /// Every type the decoder reads without a container of its own — the standard scalars and arrays of
  /// them — as a record's fields, in arrays of arrays, and at the top level, with JSONDecoder's values;
  /// and each text JSONDecoder refuses for one of them (an element of another kind, a number that is
  /// not an integer, not an array at all) declined. A fast path that read the wrong element, skipped the
  /// checks of its scalar reader, or took an object for an array fails here.
  struct Standard: Codable, Equatable {
    var string: String
    var int: Int
    var double: Double
    var bool: Bool
    var int64: Int64
    var strings: [String]
    var ints: [Int]
    var doubles: [Double]
    var bools: [Bool]
    var nested: [[String]]
    var optional: [Int]?
  }

  @Test func readsStandardScalarsAndArraysOfThemAsJSONDecoderDoes() throws {
    let values = [
      Standard(
        string: "é\n\"x", int: -42, double: 0.1, bool: true, int64: .min, strings: ["a", "", "ü"],
        ints: [1, -2, .max], doubles: [1.5, -0.0, 1e300], bools: [true, false],
        nested: [["a"], [], ["b", "c"]], optional: [7]),
      Standard(
        string: "", int: 0, double: -1, bool: false, int64: .max, strings: [], ints: [], doubles: [],
        bools: [], nested: [], optional: nil),
    ]
    for value in values {
      #expect(Self.expectAgreement(Standard.self, try Self.encoded(value)), "declined \(value)")
      #expect(JSONTextDecoder.decode(Standard.self, from: try Self.encoded(value)) == value)
    }
    #expect(Self.expectAgreement([String].self, Data(#"["x","y"]"#.utf8)))
    #expect(Self.expectAgreement([Bool].self, Data("[true,false,true]".utf8)))
    #expect(Self.expectAgreement([[Int]].self, Data("[[1,2],[],[3]]".utf8)))

    let fields = #""double":1,"int":2,"int64":3,"bool":true,"string":"s","nested":[],"#
    let refused = [
      #""strings":["a",1],"ints":[],"doubles":[],"bools":[]"#,
      #""strings":"a","ints":[],"doubles":[],"bools":[]"#,
      #""strings":{"a":"b"},"ints":[],"doubles":[],"bools":[]"#,
      #""strings":[],"ints":[1.5],"doubles":[],"bools":[]"#,
      #""strings":[],"ints":[99999999999999999999],"doubles":[],"bools":[]"#,
      #""strings":[],"ints":["1"],"doubles":[],"bools":[]"#,
      #""strings":[],"ints":[],"doubles":[1e400],"bools":[]"#,
      #""strings":[],"ints":[],"doubles":[true],"bools":[]"#,
      #""strings":[],"ints":[],"doubles":[],"bools":[1]"#,
      #""strings":[],"ints":[],"doubles":[],"bools":[null]"#,
    ]
    for members in refused {
      let text = Data("{\(fields)\(members)}".utf8)
      #expect(JSONTextDecoder.decode(Standard.self, from: text) == nil, "\(members)")
      Self.expectAgreement(Standard.self, text)
    }
    #expect(JSONTextDecoder.decode(String.self, from: Data("1".utf8)) == nil)
    #expect(JSONTextDecoder.decode([String].self, from: Data(#"{"a":"b"}"#.utf8)) == nil)
  }

  @Test func declinesWhatItIsNotSureOf() {
    let cases: [(String, any Decodable.Type)] = [
      ("", Int.self), ("01", Int.self), ("1.0", Int.self), ("1e2", Int.self), ("300", UInt8.self),
      ("99999999999999999999", Int.self), ("1e400", Double.self), ("[1,]", [Int].self), ("[1 2]", [Int].self),
      (#"{"a":1,}"#, [String: Int].self), (#"{"a":1,"a":2}"#, [String: Int].self), ("[1] x", [Int].self),
      (#""\ud800""#, String.self), (#""\x""#, String.self), ("\"a\u{1}\"", String.self), ("tru", Bool.self),
      ("1.5", Float.self), (#""AQID""#, Data.self), ("NaN", Double.self), ("[1]", Int.self),
      ("1", String.self),
      (String(repeating: "[", count: 300) + String(repeating: "]", count: 300), [[[Int]]].self),
    ]
    for (text, type) in cases {
      let declined = Self.declines(type, Data(text.utf8))
      #expect(declined, "\(text) as \(type)")
    }
    #expect(JSONTextDecoder.decode(String.self, from: Data([0x22, 0xFF, 0x22])) == nil, "invalid UTF-8")
  }

  static func declines<Value: Decodable>(_ type: Value.Type, _ text: Data) -> Bool {
    JSONTextDecoder.decode(type, from: text) == nil
  }

  struct Wallet: Codable, Equatable {
    var balance: Decimal
    var rate: Float
  }

  struct Validated: Decodable, Equatable {
    var count: Int
    init(from decoder: any Decoder) throws {
      count = try decoder.singleValueContainer().decode(Int.self)
      guard count >= 0 else {
        throw DecodingError.dataCorruptedError(
          in: try decoder.singleValueContainer(), debugDescription: "negative")
      }
    }
  }

  @Test func valueCodecGivesJSONDecodersValueOrErrorWhereTheFastPathDeclines() throws {
    let wallet = Wallet(balance: Decimal(string: "12.50") ?? 0, rate: 0.1)
    #expect(JSONTextDecoder.decode(Wallet.self, from: try Self.encoded(wallet)) == nil)
    #expect(
      try ValueCodec.decode(Wallet.self, from: Self.encoded(wallet), key: "k", version: 1, schemaVersion: 1)
        == wallet)
    #expect(JSONTextDecoder.decode(Validated.self, from: Data("-1".utf8)) == nil)
    #expect {
      try ValueCodec.decode(Validated.self, from: Data("-1".utf8), key: "count", version: 3, schemaVersion: 1)
    } throws: { error in
      guard case PersistentLiveDataError.undecodable(let key, let version, let reason) = error else {
        return false
      }
      return key == "count" && version == 3 && reason.hasPrefix("invalid data at the top level")
    }
    #expect {
      try ValueCodec.decode(
        Account.self, from: Data(#"{"id":"x"}"#.utf8), key: "a", version: 1, schemaVersion: 1)
    } throws: { error in
      guard case PersistentLiveDataError.undecodable(_, _, let reason) = error else { return false }
      return reason.hasPrefix("expected Int at id")
    }
  }

  /// A number read as whichever type works first, as hand-written `init(from:)`s do.
  enum Number: Decodable, Equatable {
    case integer(Int)
    case float(Float)
    case double(Double)
    case text(String)
    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let value = try? container.decode(Int.self) {
        self = .integer(value)
      } else if let value = try? container.decode(Float.self) {
        self = .float(value)
      } else if let value = try? container.decode(Double.self) {
        self = .double(value)
      } else {
        self = .text(try container.decode(String.self))
      }
    }
  }

  /// A value whose `init(from:)` catches an error and tries another type gets what JSONDecoder gives it,
  /// even where the fast path would have declined a step (an integer from "1.0", any `Float`).
  @Test func aValueThatCatchesAndTriesAgainGetsJSONDecodersChoice() throws {
    for text in ["1", "1.0", "1e2", "0.1", "1e300", "-0", "\"x\"", "[1.5,2,\"y\"]"] {
      let data = Data(text.utf8)
      if text.hasPrefix("[") {
        let expected = try JSONDecoder().decode([Number].self, from: data)
        #expect(
          try ValueCodec.decode([Number].self, from: data, key: "k", version: 1, schemaVersion: 1) == expected
        )
      } else {
        let expected = try JSONDecoder().decode(Number.self, from: data)
        #expect(
          try ValueCodec.decode(Number.self, from: data, key: "k", version: 1, schemaVersion: 1) == expected)
        Self.expectAgreement(Number.self, data)
      }
    }
  }

  /// Damaged text: bytes replaced, removed or inserted at random in a stored value. Whatever the damage,
  /// the fast path agrees with JSONDecoder or declines.
  @Test func damagedTextNeverGivesAnotherValue() throws {
    var generator = SeededGenerator(seed: 0xBAD_7E47)
    let alphabet = Array(#"{}[]":,\/ -+.0123456789eEtrufalsn"ubx"#.utf8) + [0x00, 0x1F, 0xC3, 0xA9, 0xFF]
    var fastPath = 0
    for index in 0..<(Reliability.underSanitizer ? 400 : 3_000) {
      var bytes = [UInt8](try Self.encoded(Self.account(index, text: "é\"\\")))
      for _ in 0..<Int.random(in: 1...3, using: &generator) {
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        let byte = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: bytes[position] = byte
        case 1: bytes.remove(at: position)
        default: bytes.insert(byte, at: position)
        }
      }
      if Self.expectAgreement(Account.self, Data(bytes)) { fastPath += 1 }
    }
    #expect(fastPath > 0, "some damaged texts are still valid accounts, read on the fast path")
  }
}
