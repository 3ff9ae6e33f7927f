internal import Foundation

/// The `Decoder` handed to a value's `init(from:)`: one node of a ``JSONTape``.
final class TextDecoder: Decoder {
  let tape: JSONTape
  let node: Int
  private let parent: TextDecoder?
  private let key: (any CodingKey)?

  init(tape: JSONTape, node: Int, parent: TextDecoder?, key: (any CodingKey)?) {
    self.tape = tape
    self.node = node
    self.parent = parent
    self.key = key
  }

  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var decoder: TextDecoder? = self
    while let current = decoder {
      if let key = current.key { path.append(key) }
      decoder = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(try TextKeyedDecodingContainer<Key>(decoder: self, object: node, path: []))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try TextUnkeyedDecodingContainer(decoder: self, array: node, path: [])
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    TextSingleValueDecodingContainer(decoder: self)
  }

  /// Decodes the value of node `index` (a child of this decoder's value, or its own).
  func decode<Value: Decodable>(_ type: Value.Type, at index: Int, key: (any CodingKey)?) throws -> Value {
    let node = tape.nodes[index]
    // The types JSONDecoder reads its own way, whatever their `init(from:)` does.
    if type == Data.self {
      guard let text = tape.string(node), let data = Data(base64Encoded: text), let value = data as? Value
      else {
        throw tape.decline()
      }
      return value
    }
    if type == URL.self {
      guard let text = tape.string(node), let url = URL(string: text), let value = url as? Value else {
        throw tape.decline()
      }
      return value
    }
    if type == Decimal.self || type == NSDecimalNumber.self || type == Float.self {
      throw tape.decline()
    }
    if let value = try standardValue(type, at: index) { return value }
    return try Value(from: TextDecoder(tape: tape, node: index, parent: self, key: key))
  }

  /// A scalar of the standard library, or an array of them, read straight from the tape: the value the
  /// generic path would decode through `init(from:)`, a container and the same scalar reader, with the
  /// same declines — without a decoder and a container per value. (An array of strings went through an
  /// unkeyed container and a decoder per element: half of a small record's decoding.) Nil for any other
  /// type.
  private func standardValue<Value>(_ type: Value.Type, at index: Int) throws -> Value? {
    if type == String.self { return try string(index) as? Value }
    if type == Int.self { return try integer(Int.self, index) as? Value }
    if type == Double.self { return try double(index) as? Value }
    if type == Bool.self { return try bool(index) as? Value }
    if type == Int64.self { return try integer(Int64.self, index) as? Value }
    if type == [String].self { return try array(at: index, string) as? Value }
    if type == [Int].self { return try array(at: index) { try integer(Int.self, $0) } as? Value }
    if type == [Double].self { return try array(at: index, double) as? Value }
    if type == [Bool].self { return try array(at: index, bool) as? Value }
    return nil
  }

  /// The elements of array node `index`, each read by `element`, as an unkeyed container reads them.
  private func array<Element>(at index: Int, _ element: (Int) throws -> Element) throws -> [Element] {
    let node = tape.nodes[index]
    guard node.kind == .array else { throw tape.decline() }
    var elements: [Element] = []
    elements.reserveCapacity(Int(node.count))
    var next = index + 1
    for _ in 0..<Int(node.count) {
      elements.append(try element(next))
      next = Int(tape.nodes[next].next)
    }
    return elements
  }

  /// Decodes this decoder's own value (the top level).
  func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
    if type == Data.self || type == URL.self || type == Decimal.self || type == Float.self {
      throw tape.decline()
    }
    return try Value(from: self)
  }

  // The scalar forms.

  func bool(_ index: Int) throws -> Bool {
    switch tape.nodes[index].kind {
    case .true: return true
    case .false: return false
    default: throw tape.decline()
    }
  }

  func string(_ index: Int) throws -> String {
    guard let string = tape.string(tape.nodes[index]) else { throw tape.decline() }
    return string
  }

  func double(_ index: Int) throws -> Double {
    let node = tape.nodes[index]
    guard node.kind == .number, let value = Double(tape.text(node)), value.isFinite else {
      throw tape.decline()
    }
    return value
  }

  /// A plain integer literal that fits; anything else (a fraction, an exponent) is JSONDecoder's to judge.
  func integer<Integer: FixedWidthInteger>(_ type: Integer.Type, _ index: Int) throws -> Integer {
    let node = tape.nodes[index]
    guard node.kind == .number else { throw tape.decline() }
    let text = tape.text(node)
    guard !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }),
      let value = Integer(text)
    else { throw tape.decline() }
    return value
  }

  func isNull(_ index: Int) -> Bool { tape.nodes[index].kind == .null }
}

/// The members of an object node: where each key's value is.
struct TextKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: TextDecoder
  let path: [any CodingKey]
  /// The node of each member's key; its value is the node after it.
  private let keyNodes: [Int]
  /// Past a few members, a dictionary from key to value node.
  private let index: [String: Int]?

  init(decoder: TextDecoder, object: Int, path: [any CodingKey]) throws {
    let tape = decoder.tape
    let node = tape.nodes[object]
    guard node.kind == .object else { throw decoder.tape.decline() }
    self.decoder = decoder
    self.path = path
    var keyNodes: [Int] = []
    keyNodes.reserveCapacity(Int(node.count))
    var member = object + 1
    for _ in 0..<node.count {
      keyNodes.append(member)
      member = Int(tape.nodes[member + 1].next)
    }
    self.keyNodes = keyNodes
    if keyNodes.count > 8 || keyNodes.contains(where: { tape.nodes[$0].kind != .string }) {
      var index: [String: Int] = [:]
      index.reserveCapacity(keyNodes.count)
      for keyNode in keyNodes {
        guard let name = tape.string(tape.nodes[keyNode]), index.updateValue(keyNode + 1, forKey: name) == nil
        else { throw decoder.tape.decline() }  // a key twice: JSONDecoder's to judge
      }
      self.index = index
    } else {
      // A key present twice is JSONDecoder's to judge.
      for (position, keyNode) in keyNodes.enumerated() {
        for other in keyNodes[(position + 1)...] where tape.sameBytes(keyNode, other) {
          throw decoder.tape.decline()
        }
      }
      self.index = nil
    }
  }

  var codingPath: [any CodingKey] { decoder.codingPath + path }

  var allKeys: [Key] {
    keyNodes.compactMap { decoder.tape.string(decoder.tape.nodes[$0]).flatMap(Key.init(stringValue:)) }
  }

  private func valueNode(_ key: Key) -> Int? {
    let name = key.stringValue
    if let index { return index[name] }
    let tape = decoder.tape
    if name.utf8.allSatisfy({ $0 < 0x80 }) {
      for keyNode in keyNodes where tape.node(tape.nodes[keyNode], equals: name) { return keyNode + 1 }
    } else {
      // As String compares (canonical equivalence), as a dictionary of the keys would.
      for keyNode in keyNodes where tape.string(tape.nodes[keyNode]) == name { return keyNode + 1 }
    }
    return nil
  }

  private func required(_ key: Key) throws -> Int {
    guard let node = valueNode(key) else { throw decoder.tape.decline() }
    return node
  }

  func contains(_ key: Key) -> Bool { valueNode(key) != nil }

  func decodeNil(forKey key: Key) throws -> Bool { decoder.isNull(try required(key)) }
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.bool(required(key)) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.string(required(key)) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.double(required(key)) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw decoder.tape.decline() }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.integer(type, required(key)) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.integer(type, required(key)) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.integer(type, required(key)) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try decoder.integer(type, required(key))
  }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try decoder.integer(type, required(key))
  }

  func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
    try decoder.decode(type, at: required(key), key: key)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    KeyedDecodingContainer(
      try TextKeyedDecodingContainer<NestedKey>(decoder: decoder, object: required(key), path: path + [key]))
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try TextUnkeyedDecodingContainer(decoder: decoder, array: required(key), path: path + [key])
  }

  func superDecoder() throws -> any Decoder { throw decoder.tape.decline() }
  func superDecoder(forKey key: Key) throws -> any Decoder { throw decoder.tape.decline() }
}

/// The elements of an array node, read in order.
struct TextUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let decoder: TextDecoder
  let path: [any CodingKey]
  let count: Int?
  private(set) var currentIndex = 0
  /// The node of the next element.
  private var next: Int

  init(decoder: TextDecoder, array: Int, path: [any CodingKey]) throws {
    let node = decoder.tape.nodes[array]
    guard node.kind == .array else { throw decoder.tape.decline() }
    self.decoder = decoder
    self.path = path
    count = Int(node.count)
    next = array + 1
  }

  var codingPath: [any CodingKey] { decoder.codingPath + path }
  var isAtEnd: Bool { currentIndex >= (count ?? 0) }

  /// The next element's node, moving past it.
  private mutating func advance() throws -> Int {
    guard !isAtEnd else { throw decoder.tape.decline() }
    let element = next
    next = Int(decoder.tape.nodes[element].next)
    currentIndex += 1
    return element
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd else { throw decoder.tape.decline() }
    guard decoder.isNull(next) else { return false }
    _ = try advance()
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool(advance()) }
  mutating func decode(_ type: String.Type) throws -> String { try decoder.string(advance()) }
  mutating func decode(_ type: Double.Type) throws -> Double { try decoder.double(advance()) }
  mutating func decode(_ type: Float.Type) throws -> Float { throw decoder.tape.decline() }
  mutating func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type, advance()) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type, advance()) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type, advance()) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type, advance()) }

  mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
    let key = TextIndexKey(index: currentIndex)
    return try decoder.decode(type, at: advance(), key: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let key = TextIndexKey(index: currentIndex)
    return KeyedDecodingContainer(
      try TextKeyedDecodingContainer<NestedKey>(decoder: decoder, object: advance(), path: path + [key]))
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let key = TextIndexKey(index: currentIndex)
    return try TextUnkeyedDecodingContainer(decoder: decoder, array: advance(), path: path + [key])
  }

  mutating func superDecoder() throws -> any Decoder { throw decoder.tape.decline() }
}

/// The single value container of ``TextDecoder``: its own node.
struct TextSingleValueDecodingContainer: SingleValueDecodingContainer {
  let decoder: TextDecoder

  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { decoder.isNull(decoder.node) }
  func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool(decoder.node) }
  func decode(_ type: String.Type) throws -> String { try decoder.string(decoder.node) }
  func decode(_ type: Double.Type) throws -> Double { try decoder.double(decoder.node) }
  func decode(_ type: Float.Type) throws -> Float { throw decoder.tape.decline() }
  func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type, decoder.node) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type, decoder.node) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type, decoder.node) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type, decoder.node) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type, decoder.node) }
  func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type, decoder.node) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type, decoder.node) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type, decoder.node) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type, decoder.node) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type, decoder.node) }

  func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
    // The value takes this decoder's place, as in JSONDecoder; its special types still read their way.
    try decoder.decode(type, at: decoder.node, key: nil)
  }
}
