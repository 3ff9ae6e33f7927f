internal import Foundation

/// Reads a value from the JSON text a store keeps, as Foundation's `JSONDecoder` (default options) reads
/// it — in a fraction of its time.
///
/// Restoring a key, reading its history and replaying its changes decode stored JSON, and `JSONDecoder`
/// is most of that time. This decoder parses the text once into a flat list of nodes and reads the
/// value's fields from it. It takes only the plain path: on anything else — a `Float`, a `Decimal`, a
/// `superDecoder()`, a number that is not a plain integer for an integer type, a key present twice, text
/// that is not strict JSON, or any error, the value's own included — ``decode(_:from:)`` returns nil and
/// the caller uses `JSONDecoder`, which then gives its value or its error as before. Tests compare the
/// two on hand-picked and random values.
///
/// ```swift
/// let point = JSONTextDecoder.decode([Int].self, from: Data("[1,2]".utf8))   // [1, 2]
/// ```
enum JSONTextDecoder {
  /// The value `payload` holds, or nil when `JSONDecoder` must read it (see the type's summary).
  static func decode<Value: Decodable>(_ type: Value.Type, from payload: Data) -> Value? {
    guard let tape = JSONTape(payload),
      let value = try? TextDecoder(tape: tape, node: 0, parent: nil, key: nil).decodeValue(type),
      // A value whose `init(from:)` caught a decline and went on (`try?` one type, then another) might
      // have chosen differently under JSONDecoder: only JSONDecoder can say.
      !tape.declined
    else { return nil }
    return value
  }
}

/// JSON's escapes inside strings (RFC 8259, section 7), for the store's decoder and pld-tool's parser.
///
/// ```swift
/// JSONEscape.byte(escapedBy: UInt8(ascii: "n"))   // 0x0A: `\n` is a line feed
/// JSONEscape.hexValue(UInt8(ascii: "b"))          // 11, a digit of `\u00e9`
/// ```
package enum JSONEscape {
  /// The byte that a backslash followed by `character` stands for; nil for `u` (four hexadecimal digits
  /// follow it) and for any character JSON does not escape.
  package static func byte(escapedBy character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): character
    case UInt8(ascii: "b"): 0x08
    case UInt8(ascii: "f"): 0x0C
    case UInt8(ascii: "n"): 0x0A
    case UInt8(ascii: "r"): 0x0D
    case UInt8(ascii: "t"): 0x09
    default: nil
    }
  }

  /// The value of one hexadecimal digit of a `\u` escape, either case; nil for any other byte.
  package static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }
}

/// Thrown to leave the fast path: `JSONDecoder` reads the value instead.
struct TextDecodingFallback: Error {}

/// The parsed text: one node per value, in document order. A container's elements follow it (an
/// object's as key, value, key, value…); `next` is the node after a value and everything inside it.
final class JSONTape {
  enum Kind: UInt8 {
    case null, `true`, `false`, number, string, escapedString, array, object
  }

  struct Node {
    var kind: Kind
    /// Scalars: the bytes of the value (of a string, inside its quotes).
    var start: Int32
    var end: Int32
    /// Containers: the number of elements (of an object: members).
    var count: Int32
    var next: Int32
  }

  let bytes: [UInt8]
  /// Immutable once parsed: reading a node is a plain array read (a class's `var` would pay a dynamic
  /// exclusivity check on every read, a tenth of a decode's time).
  let nodes: [Node]
  /// Whether the fast path declined anything while reading this text (see ``decline()``).
  private(set) var declined = false

  /// Records that the fast path cannot judge something, and the error that leaves it.
  func decline() -> TextDecodingFallback {
    declined = true
    return TextDecodingFallback()
  }

  /// Parses `payload`; nil when it is not strict JSON of one value.
  init?(_ payload: Data) {
    let bytes = [UInt8](payload)
    // JSON text is UTF-8 throughout, and JSONDecoder refuses a document that is not, keys included.
    // Checked once here: a string's bytes lie between two quotes, which never occur inside a multi-byte
    // sequence, so every string read later is valid UTF-8 already.
    guard bytes.count < Int(Int32.max), Self.isUTF8(bytes) else { return nil }
    var parser = JSONTapeParser(bytes: bytes)
    guard let nodes = parser.parseDocument() else { return nil }
    self.bytes = bytes
    self.nodes = nodes
  }

  /// Whether `bytes` are valid UTF-8: a scan for a byte above ASCII first (stored JSON is mostly ASCII),
  /// the full check only when there is one.
  static func isUTF8(_ bytes: [UInt8]) -> Bool {
    let isASCII = bytes.withUnsafeBufferPointer { buffer in
      var high: UInt8 = 0
      for byte in buffer { high |= byte }
      return high < 0x80
    }
    return isASCII || String(validating: bytes, as: UTF8.self) != nil
  }

  // MARK: Reading nodes

  /// The text of a scalar node.
  func text(_ node: Node) -> String {
    bytes.withUnsafeBufferPointer { buffer in
      String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(node.start)..<Int(node.end)]), as: UTF8.self)
    }
  }

  /// The string a string node holds; nil for an invalid escape (the text is valid UTF-8: ``init(_:)``).
  func string(_ node: Node) -> String? {
    switch node.kind {
    case .string:
      return text(node)
    case .escapedString:
      return unescaped(Int(node.start), Int(node.end))
    default:
      return nil
    }
  }

  private func unescaped(_ start: Int, _ end: Int) -> String? {
    var utf8: [UInt8] = []
    utf8.reserveCapacity(end - start)
    var position = start
    while position < end {
      let byte = bytes[position]
      guard byte == UInt8(ascii: "\\") else {
        utf8.append(byte)
        position += 1
        continue
      }
      position += 1
      guard position < end else { return nil }
      switch bytes[position] {
      case UInt8(ascii: "u"):
        guard let unit = hex4(position + 1, end) else { return nil }
        position += 4
        var scalar: Unicode.Scalar?
        if (0xD800..<0xDC00).contains(unit) {
          // A high surrogate must be followed by an escaped low one.
          guard position + 6 < end, bytes[position + 1] == UInt8(ascii: "\\"),
            bytes[position + 2] == UInt8(ascii: "u"), let low = hex4(position + 3, end),
            (0xDC00..<0xE000).contains(low)
          else { return nil }
          position += 6
          scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        } else {
          scalar = Unicode.Scalar(unit)
        }
        guard let scalar else { return nil }
        utf8.append(contentsOf: String(Character(scalar)).utf8)
      case let character:
        guard let byte = JSONEscape.byte(escapedBy: character) else { return nil }
        utf8.append(byte)
      }
      position += 1
    }
    return String(validating: utf8, as: UTF8.self)
  }

  private func hex4(_ start: Int, _ end: Int) -> UInt32? {
    guard start + 4 <= end else { return nil }
    var value: UInt32 = 0
    for byte in bytes[start..<start + 4] {
      guard let digit = JSONEscape.hexValue(byte) else { return nil }
      value = value << 4 | digit
    }
    return value
  }

  /// Whether nodes `first` and `second` hold the same bytes.
  func sameBytes(_ first: Int, _ second: Int) -> Bool {
    let (left, right) = (nodes[first], nodes[second])
    let length = Int(left.end - left.start)
    guard length == Int(right.end - right.start) else { return false }
    return bytes.withUnsafeBufferPointer { buffer in
      guard length > 0, let base = buffer.baseAddress else { return true }
      return memcmp(base + Int(left.start), base + Int(right.start), length) == 0
    }
  }

  /// Whether a string node's bytes are exactly `key` (unescaped nodes only).
  func node(_ node: Node, equals key: String) -> Bool {
    guard node.kind == .string else { return string(node) == key }
    var key = key
    return key.withUTF8 { key in
      let length = Int(node.end - node.start)
      guard key.count == length else { return false }
      return bytes.withUnsafeBufferPointer { buffer in
        guard length > 0, let base = buffer.baseAddress, let keyBase = key.baseAddress else { return true }
        return memcmp(base + Int(node.start), keyBase, length) == 0
      }
    }
  }
}

/// Parses JSON text into a ``JSONTape``'s nodes: a value type, so that building the list costs no
/// exclusivity check per node.
private struct JSONTapeParser {
  typealias Node = JSONTape.Node
  typealias Kind = JSONTape.Kind

  let bytes: [UInt8]
  var nodes: [Node] = []

  /// Nesting deeper than this is left to `JSONDecoder` (which has a limit of its own).
  private static let depthLimit = 256

  init(bytes: [UInt8]) {
    self.bytes = bytes
    nodes.reserveCapacity(16)
  }

  /// The nodes of the one value `bytes` hold; nil when they are not strict JSON of one value.
  mutating func parseDocument() -> [Node]? {
    var position = 0
    guard parseValue(&position, depth: 0) else { return nil }
    skipSpace(&position)
    guard position == bytes.count else { return nil }
    return nodes
  }

  private func skipSpace(_ position: inout Int) {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  private mutating func parseValue(_ position: inout Int, depth: Int) -> Bool {
    skipSpace(&position)
    guard position < bytes.count, depth < Self.depthLimit else { return false }
    let index = nodes.count
    switch bytes[position] {
    case UInt8(ascii: "{"): return parseContainer(&position, depth: depth, index: index, isObject: true)
    case UInt8(ascii: "["): return parseContainer(&position, depth: depth, index: index, isObject: false)
    case UInt8(ascii: "\""): return parseString(&position)
    case UInt8(ascii: "t"): return parseLiteral(&position, "true", .true)
    case UInt8(ascii: "f"): return parseLiteral(&position, "false", .false)
    case UInt8(ascii: "n"): return parseLiteral(&position, "null", .null)
    default: return parseNumber(&position)
    }
  }

  private mutating func append(_ kind: Kind, _ start: Int, _ end: Int) {
    nodes.append(
      Node(kind: kind, start: Int32(start), end: Int32(end), count: 0, next: Int32(nodes.count + 1)))
  }

  private mutating func parseContainer(
    _ position: inout Int, depth: Int, index: Int, isObject: Bool
  ) -> Bool {
    nodes.append(Node(kind: isObject ? .object : .array, start: Int32(position), end: 0, count: 0, next: 0))
    position += 1
    var count: Int32 = 0
    let close = UInt8(ascii: isObject ? "}" : "]")
    skipSpace(&position)
    if position < bytes.count, bytes[position] == close {
      position += 1
    } else {
      while true {
        if isObject {
          skipSpace(&position)
          guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), parseString(&position) else {
            return false
          }
          skipSpace(&position)
          guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return false }
          position += 1
        }
        guard parseValue(&position, depth: depth + 1) else { return false }
        count += 1
        skipSpace(&position)
        guard position < bytes.count else { return false }
        if bytes[position] == UInt8(ascii: ",") {
          position += 1
        } else if bytes[position] == close {
          position += 1
          break
        } else {
          return false
        }
      }
    }
    nodes[index].count = count
    nodes[index].end = Int32(position)
    nodes[index].next = Int32(nodes.count)
    return true
  }

  private mutating func parseString(_ position: inout Int) -> Bool {
    position += 1
    let start = position
    var escaped = false
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") {
        append(escaped ? .escapedString : .string, start, position)
        position += 1
        return true
      }
      if byte < 0x20 { return false }
      if byte == UInt8(ascii: "\\") {
        escaped = true
        position += 1  // the escaped character; checked when the string is read
      }
      position += 1
    }
    return false
  }

  private mutating func parseLiteral(_ position: inout Int, _ literal: StaticString, _ kind: Kind) -> Bool {
    let length = literal.utf8CodeUnitCount
    guard position + length <= bytes.count else { return false }
    let matches = literal.withUTF8Buffer { expected in
      (0..<length).allSatisfy { bytes[position + $0] == expected[$0] }
    }
    guard matches else { return false }
    append(kind, position, position + length)
    position += length
    return true
  }

  /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as JSON has it.
  private mutating func parseNumber(_ position: inout Int) -> Bool {
    let start = position
    func digits() -> Int {
      let from = position
      while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 { position += 1 }
      return position - from
    }
    if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
    let integral = position
    guard digits() > 0, !(bytes[integral] == 0x30 && position - integral > 1) else { return false }
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      position += 1
      guard digits() > 0 else { return false }
    }
    if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
      position += 1
      if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
      {
        position += 1
      }
      guard digits() > 0 else { return false }
    }
    append(.number, start, position)
    return true
  }
}
