/// A JSON document as parsed by pld-tool: numbers keep their exact text, objects keep their member order.
///
/// Payloads are printed, compared (`diff`) and embedded in `--json` output through this type, so a number
/// such as `12345678901234567890` or `0.1` is shown exactly as stored, never rounded through `Double`.
enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  /// A number, as its JSON text (`-1.5e3`).
  case number(String)
  case string(String)
  case array([JSONValue])
  /// Members in document order.
  case object([Member])

  /// One member of an object.
  struct Member: Equatable, Sendable {
    var key: String
    var value: JSONValue

    init(_ key: String, _ value: JSONValue) {
      self.key = key
      self.value = value
    }
  }

  /// A JSON integer.
  static func integer(_ value: some BinaryInteger) -> JSONValue {
    .number(String(value))
  }

  /// The value of member `key` of an object (the last one if the key is repeated).
  subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.last { $0.key == key }?.value
  }

  /// The kind of value, for messages: `object`, `array`, `string`, `number`, `boolean` or `null`.
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "boolean"
    case .number: "number"
    case .string: "string"
    case .array: "array"
    case .object: "object"
    }
  }
}
