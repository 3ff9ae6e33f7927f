internal import Foundation

/// The keyed container of ``TextEncoder``: an object's members, in the order they were encoded (they are
/// sorted when written).
struct TextKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: TextEncoder
  let object: JSONObjectNode
  /// The keys of nested containers between `encoder` and this one.
  let path: [any CodingKey]
  /// The nesting level of this object: 1 at the top level.
  let depth: Int

  var codingPath: [any CodingKey] { encoder.codingPath + path }

  private func add(_ node: JSONNode, _ key: Key) {
    if object.members.isEmpty { object.members.reserveCapacity(8) }
    object.members.append((key.stringValue, node))
  }

  mutating func encodeNil(forKey key: Key) throws { add(.text("null"), key) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { add(.text(value ? "true" : "false"), key) }
  mutating func encode(_ value: String, forKey key: Key) throws { add(.string(value), key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { add(encoder.number(value), key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { add(encoder.number(value), key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { add(TextEncoder.number(value), key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { add(TextEncoder.number(value), key) }

  mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
    // A nested value's own errors end this encoding: JSONEncoder then runs and reports them.
    add(encoder.node(for: value, key: key, level: depth + 1) ?? .text("null"), key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = JSONObjectNode()
    // Past the limit, out of the tree and without a longer path: a loop nesting containers stays linear.
    let admitted = encoder.admits(depth + 1)
    if admitted { add(.object(nested), key) }
    return KeyedEncodingContainer(
      TextKeyedContainer<NestedKey>(
        encoder: encoder, object: nested, path: admitted ? path + [key] : path, depth: depth + 1))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = JSONArrayNode()
    let admitted = encoder.admits(depth + 1)
    if admitted { add(.array(nested), key) }
    return TextUnkeyedContainer(
      encoder: encoder, array: nested, path: admitted ? path + [key] : path, depth: depth + 1)
  }

  mutating func superEncoder() -> any Encoder { fallingBack() }
  mutating func superEncoder(forKey key: Key) -> any Encoder { fallingBack() }

  private func fallingBack() -> any Encoder {
    encoder.context.needsFallback = true
    // JSONEncoder nests a super encoder's value one level down, under a key of its own.
    return TextEncoder(parent: encoder, key: nil, level: depth + 1)
  }
}

/// The unkeyed container of ``TextEncoder``: an array's elements.
struct TextUnkeyedContainer: UnkeyedEncodingContainer {
  let encoder: TextEncoder
  let array: JSONArrayNode
  let path: [any CodingKey]
  /// The nesting level of this array: 1 at the top level.
  let depth: Int

  var codingPath: [any CodingKey] { encoder.codingPath + path }
  var count: Int { array.elements.count }

  private func add(_ node: JSONNode) {
    if array.elements.isEmpty { array.elements.reserveCapacity(4) }
    array.elements.append(node)
  }

  mutating func encodeNil() throws { add(.text("null")) }
  mutating func encode(_ value: Bool) throws { add(.text(value ? "true" : "false")) }
  mutating func encode(_ value: String) throws { add(.string(value)) }
  mutating func encode(_ value: Double) throws { add(encoder.number(value)) }
  mutating func encode(_ value: Float) throws { add(encoder.number(value)) }
  mutating func encode(_ value: Int) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: Int8) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: Int16) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: Int32) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: Int64) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt8) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt16) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt32) throws { add(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt64) throws { add(TextEncoder.number(value)) }

  mutating func encode<Value: Encodable>(_ value: Value) throws {
    let key = TextIndexKey(index: array.elements.count)
    add(encoder.node(for: value, key: key, level: depth + 1) ?? .text("null"))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  )
    -> KeyedEncodingContainer<NestedKey>
  {
    let nested = JSONObjectNode()
    let key = TextIndexKey(index: array.elements.count)
    // Past the limit, out of the tree and without a longer path: a loop nesting containers stays linear.
    let admitted = encoder.admits(depth + 1)
    if admitted { add(.object(nested)) }
    return KeyedEncodingContainer(
      TextKeyedContainer<NestedKey>(
        encoder: encoder, object: nested, path: admitted ? path + [key] : path, depth: depth + 1))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let nested = JSONArrayNode()
    let key = TextIndexKey(index: array.elements.count)
    let admitted = encoder.admits(depth + 1)
    if admitted { add(.array(nested)) }
    return TextUnkeyedContainer(
      encoder: encoder, array: nested, path: admitted ? path + [key] : path, depth: depth + 1)
  }

  mutating func superEncoder() -> any Encoder {
    encoder.context.needsFallback = true
    return TextEncoder(parent: encoder, key: nil, level: depth + 1)
  }
}

/// The single value container of ``TextEncoder``.
struct TextSingleValueContainer: SingleValueEncodingContainer {
  let encoder: TextEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil() throws { encoder.setSingle(.text("null")) }
  mutating func encode(_ value: Bool) throws { encoder.setSingle(.text(value ? "true" : "false")) }
  mutating func encode(_ value: String) throws { encoder.setSingle(.string(value)) }
  mutating func encode(_ value: Double) throws { encoder.setSingle(encoder.number(value)) }
  mutating func encode(_ value: Float) throws { encoder.setSingle(encoder.number(value)) }
  mutating func encode(_ value: Int) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: Int8) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: Int16) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: Int32) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: Int64) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt8) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt16) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt32) throws { encoder.setSingle(TextEncoder.number(value)) }
  mutating func encode(_ value: UInt64) throws { encoder.setSingle(TextEncoder.number(value)) }

  mutating func encode<Value: Encodable>(_ value: Value) throws {
    // The value takes this encoder's place: its containers are this encoder's.
    if let node = encoder.node(for: value, key: nil, level: encoder.level) { encoder.setSingle(node) }
  }
}

/// Writes nodes as JSON text: object members sorted by key in the order of their UTF-8 bytes (as
/// `JSONEncoder.OutputFormatting.sortedKeys` sorts them on this platform — not `String`'s `<`, which
/// compares canonical forms), strings escaped as `JSONEncoder` escapes them, slashes not escaped.
struct JSONOutput {
  var bytes: [UInt8] = []

  /// Writes `node` and what it holds.
  mutating func write(_ node: JSONNode) {
    switch node {
    case .encoder(let encoder):
      guard let result = encoder.result else {
        bytes += "{}".utf8  // a nested value that encoded nothing: JSONEncoder writes an empty object
        return
      }
      write(result)
    case .string(let string): writeString(string)
    case .text(let text): bytes += text.utf8
    case .array(let array):
      bytes.append(UInt8(ascii: "["))
      for (index, element) in array.elements.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        write(element)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      bytes.append(UInt8(ascii: "{"))
      var isFirst = true
      Self.forEachInKeyOrder(object.members) { member in
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        isFirst = false
        writeString(member.key)
        bytes.append(UInt8(ascii: ":"))
        write(member.value)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  /// Calls `body` with the members in key order; of a key encoded twice, with the last value only (as
  /// JSONEncoder keeps it). Sorts positions, not members: no member is copied (or retained) to sort.
  private static func forEachInKeyOrder(
    _ members: [(key: String, value: JSONNode)], _ body: ((key: String, value: JSONNode)) -> Void
  ) {
    var isSorted = true
    for index in members.indices.dropFirst() where !Self.precedes(members[index - 1].key, members[index].key)
    {
      isSorted = false
      break
    }
    if isSorted {
      for member in members { body(member) }
      return
    }
    withUnsafeTemporaryAllocation(of: Int.self, capacity: members.count) { order in
      // Of equal keys, the one encoded last must stay last: both sorts below are stable.
      if members.count <= 16 {
        // An insertion sort: for the handful of members a Codable type has, faster than a general sort.
        for index in members.indices {
          var slot = index
          while slot > 0, Self.precedes(members[index].key, members[order[slot - 1]].key) {
            order[slot] = order[slot - 1]
            slot -= 1
          }
          order[slot] = index
        }
      } else {
        // A dictionary's entries: O(n log n), equal keys kept in encoding order by their positions.
        for index in members.indices { order[index] = index }
        var positions = order
        positions.sort { left, right in
          if Self.precedes(members[left].key, members[right].key) { return true }
          return left < right && !Self.precedes(members[right].key, members[left].key)
        }
      }
      for slot in 0..<members.count {
        let member = members[order[slot]]
        // Equal keys are adjacent: only the last of them is written.
        if slot + 1 < members.count, !Self.precedes(member.key, members[order[slot + 1]].key) { continue }
        body(member)
      }
    }
  }

  /// Whether `left` sorts before `right`, byte by byte in UTF-8.
  private static func precedes(_ left: String, _ right: String) -> Bool {
    var left = left
    var right = right
    return left.withUTF8 { left in
      right.withUTF8 { right in
        let common = min(left.count, right.count)
        guard common > 0, let leftBytes = left.baseAddress, let rightBytes = right.baseAddress else {
          return left.count < right.count
        }
        let order = memcmp(leftBytes, rightBytes, common)
        return order == 0 ? left.count < right.count : order < 0
      }
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  private mutating func writeString(_ string: String) {
    bytes.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { utf8 in
      var start = 0
      for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
        start = index + 1
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
          bytes += "u00".utf8
          bytes.append(Self.hexDigits[Int(byte >> 4)])
          bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
