internal import Foundation

/// Writes a value as the JSON text a store keeps, byte for byte what Foundation's `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` and its default strategies — in a fraction of its time.
///
/// Every write encodes its value, and `JSONEncoder` is most of a write's CPU time: it builds a tree of
/// boxed values, then a writer walks it. This encoder keeps the few nodes a value needs and writes the
/// bytes once. Where `JSONEncoder` does something this one does not — a `Decimal`, a `superEncoder()`, a
/// container of another kind asked of the same encoder, a non-finite number, a top level that encodes
/// nothing, an error thrown by the value's own `encode(to:)` — ``encode(_:)`` returns nil and the caller
/// uses `JSONEncoder`, which then reports what it always reported. Tests compare the two byte for byte.
///
/// A value nested deeper than ``JSONDepth/limit`` is refused, never handed to `JSONEncoder` (which would
/// write what `JSONDecoder` cannot read, or overflow the stack): each encoder and container knows its
/// nesting level, and at the first array or object past the limit the encoding stops going deeper.
///
/// ```swift
/// let text = try JSONTextEncoder.encode(["b": 1, "a": 2])   // {"a":2,"b":1}
/// ```
enum JSONTextEncoder {
  /// The JSON text of `value`, or nil when only `JSONEncoder` can write it (see the type's summary).
  ///
  /// - Throws: ``JSONDepthExceeded`` when `value` nests arrays and objects deeper than
  ///   ``JSONDepth/limit``; `JSONEncoder` must not write it either.
  static func encode<Value: Encodable>(_ value: Value) throws(JSONDepthExceeded) -> Data? {
    let root = TextEncoder(parent: nil, key: nil, level: 1)
    let encoded = root.node(for: value, level: 1)
    if let depth = root.context.tooDeep { throw JSONDepthExceeded(depth: depth) }
    guard var node = encoded, !root.context.needsFallback else { return nil }
    if case .encoder(let top) = node {
      // A top level that encoded nothing is an error of JSONEncoder's.
      guard let result = top.result else { return nil }
      node = result
    }
    var output = JSONOutput()
    output.bytes.reserveCapacity(128)
    output.write(node)
    return Data(output.bytes)
  }
}

/// A value encoded so far. Objects and arrays are references: a nested container keeps writing into its
/// node after the call that made it returned.
enum JSONNode {
  case string(String)
  /// JSON number or literal text, ready to write.
  case text(String)
  case object(JSONObjectNode)
  case array(JSONArrayNode)
  /// A value that encoded itself through an encoder of its own; read when the text is written.
  case encoder(TextEncoder)
}

final class JSONObjectNode {
  var members: [(key: String, value: JSONNode)] = []
}

final class JSONArrayNode {
  var elements: [JSONNode] = []
}

/// What the encoders of one ``JSONTextEncoder/encode(_:)`` share.
final class TextEncodingContext {
  /// Set when the value asked for what only `JSONEncoder` does.
  var needsFallback = false
  /// The level of the first array or object nested deeper than ``JSONDepth/limit``. Once it is set, no
  /// nested value is encoded any more (``TextEncoder/node(for:key:level:)``): the recursion stops there.
  var tooDeep: Int?

  /// Records an array or object at `level`, past ``JSONDepth/limit``.
  func refuse(level: Int) {
    if tooDeep == nil { tooDeep = level }
  }
}

/// The `Encoder` handed to a value's `encode(to:)`.
final class TextEncoder: Encoder {
  private enum Storage {
    case none
    case single(JSONNode)
    case object(JSONObjectNode)
    case array(JSONArrayNode)
  }

  let context: TextEncodingContext
  /// The encoder this one encodes a nested value for, while that value's `encode(to:)` runs; nil after
  /// it returned. The parent's tree holds this encoder (``JSONNode/encoder(_:)``): a link back for
  /// longer would make a cycle, and every encoding of a nested value would leak its encoders.
  private var parent: TextEncoder?
  private let key: (any CodingKey)?
  /// The nesting level of this encoder's array or object: 1 for the top level's.
  let level: Int
  private var storage = Storage.none

  init(parent: TextEncoder?, key: (any CodingKey)?, level: Int) {
    self.parent = parent
    self.key = key
    self.level = level
    context = parent?.context ?? TextEncodingContext()
  }

  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var encoder: TextEncoder? = self
    while let current = encoder {
      if let key = current.key { path.append(key) }
      encoder = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// What this encoder holds: nil when the value encoded nothing.
  var result: JSONNode? {
    switch storage {
    case .none: nil
    case .single(let node): node
    case .object(let object): .object(object)
    case .array(let array): .array(array)
    }
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let object: JSONObjectNode
    if !admits(level) {
      // Refused: a container of its own, holding what the value still encodes, in no tree.
      object = JSONObjectNode()
    } else {
      switch storage {
      case .object(let existing):
        object = existing
      case .none:
        object = JSONObjectNode()
        storage = .object(object)
      default:
        context.needsFallback = true
        object = JSONObjectNode()
      }
    }
    return KeyedEncodingContainer(
      TextKeyedContainer<Key>(encoder: self, object: object, path: [], depth: level))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let array: JSONArrayNode
    if !admits(level) {
      array = JSONArrayNode()
    } else {
      switch storage {
      case .array(let existing):
        array = existing
      case .none:
        array = JSONArrayNode()
        storage = .array(array)
      default:
        context.needsFallback = true
        array = JSONArrayNode()
      }
    }
    return TextUnkeyedContainer(encoder: self, array: array, path: [], depth: level)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    TextSingleValueContainer(encoder: self)
  }

  /// Whether an array or object at nesting level `level` is within ``JSONDepth/limit``. One past it is
  /// recorded as refused and kept out of the tree, so that no chain of nodes deeper than the limit is
  /// ever built (or torn down).
  func admits(_ level: Int) -> Bool {
    guard level > JSONDepth.limit else { return true }
    context.refuse(level: level)
    return false
  }

  /// Stores the value of a single value container: once only, as `JSONEncoder` allows.
  func setSingle(_ node: JSONNode) {
    guard case .none = storage else {
      context.needsFallback = true
      return
    }
    storage = .single(node)
  }

  /// The node of a nested value `value` under `key`, whose array or object would be at nesting level
  /// `level` (nil: fall back, or refused as too deep).
  func node<Value: Encodable>(for value: Value, key: (any CodingKey)? = nil, level: Int) -> JSONNode? {
    // Past the depth limit nothing nested is encoded: however deep the value, the recursion ends here.
    guard context.tooDeep == nil else { return nil }
    // The types JSONEncoder writes its own way, whatever their `encode(to:)` does.
    if Value.self == Data.self, let data = value as? Data { return .string(data.base64EncodedString()) }
    if Value.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
    if Value.self == Decimal.self || Value.self == NSDecimalNumber.self {
      context.needsFallback = true
      return nil
    }
    if let node = standardNode(for: value, level: level) { return node }
    let child = TextEncoder(parent: self, key: key, level: level)
    defer { child.parent = nil }  // the tree holds the child from now on: no link back (see `parent`)
    do {
      try value.encode(to: child)
    } catch {
      context.needsFallback = true
      return nil
    }
    return .encoder(child)
  }

  /// A scalar of the standard library, or an array of them, as the node its `encode(to:)` makes through
  /// a container (the same node, by the same scalar forms) — without an encoder and a container per
  /// value. Nil for any other type, and for an array past the depth limit (its container refuses it).
  private func standardNode<Value: Encodable>(for value: Value, level: Int) -> JSONNode? {
    if Value.self == String.self, let value = value as? String { return .string(value) }
    if Value.self == Int.self, let value = value as? Int { return Self.number(value) }
    if Value.self == Double.self, let value = value as? Double { return number(value) }
    if Value.self == Bool.self, let value = value as? Bool { return Self.literal(value) }
    if Value.self == Int64.self, let value = value as? Int64 { return Self.number(value) }
    guard level <= JSONDepth.limit else { return nil }
    if Value.self == [String].self, let value = value as? [String] {
      return Self.array(value.map(JSONNode.string))
    }
    if Value.self == [Int].self, let value = value as? [Int] { return Self.array(value.map(Self.number)) }
    if Value.self == [Double].self, let value = value as? [Double] { return Self.array(value.map(number)) }
    if Value.self == [Bool].self, let value = value as? [Bool] { return Self.array(value.map(Self.literal)) }
    return nil
  }

  private static func array(_ elements: [JSONNode]) -> JSONNode {
    let array = JSONArrayNode()
    array.elements = elements
    return .array(array)
  }

  // The scalar forms: what JSONEncoder writes for each.

  static func literal(_ value: Bool) -> JSONNode { .text(value ? "true" : "false") }

  static func number<Number: FixedWidthInteger>(_ value: Number) -> JSONNode { .text(String(value)) }

  /// `description` without a trailing ".0"; a non-finite number falls back (JSONEncoder throws).
  func number<Number: BinaryFloatingPoint & CustomStringConvertible>(_ value: Number) -> JSONNode {
    guard value.isFinite else {
      context.needsFallback = true
      return .text("null")
    }
    var text = value.description
    if text.hasSuffix(".0") { text.removeLast(2) }
    return .text(text)
  }
}

/// A key of an array element's coding path, as JSONEncoder and JSONDecoder name it (both codecs use it).
struct TextIndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { "Index \(intValue ?? 0)" }
  init(index: Int) { intValue = index }
  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.intValue = intValue }
}
