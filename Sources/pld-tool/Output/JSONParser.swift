import PersistentLiveData

/// A strict JSON parser (RFC 8259) producing ``JSONValue``.
///
/// Strict like SQLite's `json_valid` and Foundation: no comments, no trailing commas, no leading zeros,
/// no raw control characters in strings; any value at the top level. Nesting deeper than
/// ``maximumDepth`` is refused as soon as it is met, before the parser recurses any further, so no text
/// can exhaust the stack.
struct JSONParser {
  /// The deepest nesting of arrays and objects accepted in a value: the store's limit,
  /// ``JSONDepth/limit`` (512, the most `JSONDecoder` reads back).
  static let maximumDepth = JSONDepth.limit

  /// Why a text is not JSON, and where.
  struct Failure: Error, CustomStringConvertible, Equatable {
    /// What was expected or found.
    var reason: String
    /// 1-based line and column of the problem.
    var line: Int
    var column: Int
    /// For a value nested deeper than ``maximumDepth``: the level of the array or object past it.
    var depth: Int?

    /// "unexpected character "x" at line 1, column 5".
    var description: String { "\(reason) at line \(line), column \(column)" }
  }

  private let bytes: [UInt8]
  private var index = 0
  private var depth = 0
  /// Levels of arrays and objects around the values the text holds, not counted in their depth.
  private let envelope: Int

  private init(_ bytes: [UInt8], envelope: Int) {
    self.bytes = bytes
    self.envelope = envelope
  }

  /// Parses `text` as one JSON value surrounded by optional whitespace.
  ///
  /// ```swift
  /// let value = try JSONParser.parse(#"{"theme": "dark"}"#)
  /// let line = try JSONParser.parse(#"{"key": "k", "value": [[1]]}"#, envelope: 1)
  /// ```
  /// - Parameter envelope: How many levels of arrays and objects enclose the values the text carries
  ///   (1 for a line of `export`, whose object holds the value): the text may nest that much deeper
  ///   than ``maximumDepth``.
  /// - Throws: ``Failure`` naming the line and column of the first problem.
  static func parse(_ text: String, envelope: Int = 0) throws(Failure) -> JSONValue {
    try parse(bytes: Array(text.utf8), envelope: envelope)
  }

  /// Parses UTF-8 `bytes` as one JSON value; invalid UTF-8 inside strings is replaced by U+FFFD.
  ///
  /// - Throws: ``Failure``.
  static func parse(bytes: [UInt8], envelope: Int = 0) throws(Failure) -> JSONValue {
    var parser = JSONParser(bytes, envelope: envelope)
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else {
      throw parser.failure("unexpected \(parser.describeCurrent()) after the JSON value")
    }
    return value
  }

  // MARK: Values

  private mutating func parseValue() throws(Failure) -> JSONValue {
    guard index < bytes.count else { throw failure("unexpected end of text, expected a value") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
    case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
    case UInt8(ascii: "n"): try expectWord("null"); return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
    default: throw failure("unexpected \(describeCurrent()), expected a value")
    }
  }

  private mutating func parseObject() throws(Failure) -> JSONValue {
    try enterContainer()
    index += 1
    var members: [JSONValue.Member] = []
    skipWhitespace()
    if peek(UInt8(ascii: "}")) {
      index += 1
      depth -= 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard peek(UInt8(ascii: "\"")) else {
        throw failure("unexpected \(describeCurrent()), expected a member name")
      }
      let key = try parseString()
      skipWhitespace()
      guard peek(UInt8(ascii: ":")) else { throw failure("unexpected \(describeCurrent()), expected \":\"") }
      index += 1
      skipWhitespace()
      members.append(JSONValue.Member(key, try parseValue()))
      skipWhitespace()
      if peek(UInt8(ascii: ",")) {
        index += 1
        continue
      }
      guard peek(UInt8(ascii: "}")) else {
        throw failure("unexpected \(describeCurrent()), expected \",\" or \"}\"")
      }
      index += 1
      depth -= 1
      return .object(members)
    }
  }

  private mutating func parseArray() throws(Failure) -> JSONValue {
    try enterContainer()
    index += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if peek(UInt8(ascii: "]")) {
      index += 1
      depth -= 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      if peek(UInt8(ascii: ",")) {
        index += 1
        continue
      }
      guard peek(UInt8(ascii: "]")) else {
        throw failure("unexpected \(describeCurrent()), expected \",\" or \"]\"")
      }
      index += 1
      depth -= 1
      return .array(elements)
    }
  }

  private mutating func enterContainer() throws(Failure) {
    depth += 1
    if depth > Self.maximumDepth + envelope {
      var failure = failure(
        "a value nested deeper than \(Self.maximumDepth) levels (the most JSONDecoder reads back)")
      failure.depth = depth - envelope
      throw failure
    }
  }

  // MARK: Strings

  private mutating func parseString() throws(Failure) -> String {
    index += 1  // opening quote
    var utf8: [UInt8] = []
    while true {
      guard index < bytes.count else { throw failure("unterminated string") }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: utf8, as: UTF8.self)
      case UInt8(ascii: "\\"):
        index += 1
        try parseEscape(into: &utf8)
      case 0..<0x20:
        throw failure("control character U+\(hex4(UInt32(byte))) must be escaped in a string")
      default:
        utf8.append(byte)
        index += 1
      }
    }
  }

  private mutating func parseEscape(into utf8: inout [UInt8]) throws(Failure) {
    guard index < bytes.count else { throw failure("unterminated string") }
    let byte = bytes[index]
    index += 1
    switch byte {
    case UInt8(ascii: "u"):
      var code = try parseHex4()
      if (0xD800...0xDBFF).contains(code), bytes[index...].starts(with: Array("\\u".utf8)) {
        let mark = index
        index += 2
        let low = try parseHex4()
        if (0xDC00...0xDFFF).contains(low) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else {
          index = mark
        }
      }
      // A lone surrogate cannot be represented in a Swift string: U+FFFD, as Foundation does.
      let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
      utf8.append(contentsOf: Array(String(Character(scalar)).utf8))
    default:
      guard let escaped = JSONEscape.byte(escapedBy: byte) else {
        index -= 1
        throw failure("invalid escape \"\\\(describeByte(byte))\" in a string")
      }
      utf8.append(escaped)
    }
  }

  private mutating func parseHex4() throws(Failure) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard index < bytes.count, let digit = JSONEscape.hexValue(bytes[index]) else {
        throw failure("invalid \\u escape, expected 4 hexadecimal digits")
      }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  // MARK: Numbers and words

  private mutating func parseNumber() throws(Failure) -> String {
    let start = index
    if peek(UInt8(ascii: "-")) { index += 1 }
    guard index < bytes.count, isDigit(bytes[index]) else {
      throw failure("invalid number, expected a digit")
    }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
      if index < bytes.count, isDigit(bytes[index]) { throw failure("invalid number, leading zero") }
    } else {
      skipDigits()
    }
    if peek(UInt8(ascii: ".")) {
      index += 1
      guard index < bytes.count, isDigit(bytes[index]) else {
        throw failure("invalid number, expected a digit after \".\"")
      }
      skipDigits()
    }
    if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
      index += 1
      if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
      guard index < bytes.count, isDigit(bytes[index]) else {
        throw failure("invalid number, expected a digit in the exponent")
      }
      skipDigits()
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    // JSON allows any number; a stored value is read back as a 64-bit floating-point number at most.
    if let number = Double(text), number.isInfinite {
      index = start
      throw failure(
        "the number \(text) is beyond what a value can hold (a 64-bit floating-point number, at most about "
          + "±1.8e308); to keep it as it is written, write it as a string (\"\(text)\")")
    }
    return text
  }

  private mutating func skipDigits() {
    while index < bytes.count, isDigit(bytes[index]) { index += 1 }
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  private mutating func expectWord(_ word: String) throws(Failure) {
    let expected = Array(word.utf8)
    guard bytes[index...].starts(with: expected) else {
      throw failure("unexpected \(describeCurrent()), expected a value")
    }
    index += expected.count
  }

  // MARK: Helpers

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
      default: return
      }
    }
  }

  private func peek(_ byte: UInt8) -> Bool {
    index < bytes.count && bytes[index] == byte
  }

  private func describeCurrent() -> String {
    guard index < bytes.count else { return "end of text" }
    return "character \"\(describeByte(bytes[index]))\""
  }

  /// A byte for a message: printable ASCII as is, anything else as `\u{…}` (never raw).
  private func describeByte(_ byte: UInt8) -> String {
    if byte >= 0x20, byte < 0x7F { return String(UnicodeScalar(byte)) }
    if byte < 0x80 { return "\\u{\(String(byte, radix: 16, uppercase: true))}" }
    // The start of a multibyte character: decode it for the message.
    let end = min(bytes.count, index + 4)
    let character = String(decoding: bytes[index..<end], as: UTF8.self).first ?? "\u{FFFD}"
    return TerminalText.escaped(String(character))
  }

  private func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// A failure at the current position.
  private func failure(_ reason: String) -> Failure {
    var line = 1
    var column = 1
    for byte in bytes[..<min(index, bytes.count)] {
      if byte == UInt8(ascii: "\n") {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    return Failure(reason: reason, line: line, column: column)
  }
}
