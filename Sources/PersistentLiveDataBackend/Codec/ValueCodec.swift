package import Foundation

/// Turns values into the JSON text stored in `pld_values.payload` and back.
///
/// Keys are sorted so that equal values give equal bytes and diffs stay small; slashes are not escaped
/// so the text reads naturally in any SQLite client.
package enum ValueCodec {
  private static let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }()
  private static let decoder = JSONDecoder()

  /// The JSON text of `value`, stored under `key`.
  ///
  /// - Throws: ``PersistentLiveDataError/valueTooDeep(key:depth:)`` for a value nested deeper than
  ///   ``JSONDepth/limit`` (found by the store's own encoder before it goes deeper, never handed to
  ///   `JSONEncoder`), or ``PersistentLiveDataError/encodingFailed(key:reason:)``.
  package static func encode<Value: Encodable>(_ value: Value, key: String) throws -> Data {
    // The same bytes as the JSONEncoder below, faster; it declines what only JSONEncoder writes.
    let text: Data?
    do {
      text = try JSONTextEncoder.encode(value)
    } catch {
      throw PersistentLiveDataError.valueTooDeep(key: key, depth: error.depth)
    }
    if let text { return text }
    do {
      return try encoder.encode(value)
    } catch {
      throw PersistentLiveDataError.encodingFailed(key: key, reason: describe(error))
    }
  }

  /// Decodes a payload stored with the type's current schema version (the common case: no extra work).
  ///
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` naming the schema version.
  static func decode<Value: Decodable>(
    _ type: Value.Type, from payload: Data, key: String, version: Int64, schemaVersion: Int
  ) throws -> Value {
    // JSONDecoder's value, faster; it declines what only JSONDecoder reads, and every error.
    if let value = JSONTextDecoder.decode(type, from: payload) { return value }
    do {
      return try decoder.decode(type, from: payload)
    } catch {
      throw undecodable(
        error, key: key, version: version, stored: schemaVersion, current: schemaVersion, payload: payload)
    }
  }

  /// The error of a version that does not decode: the decoding failure, and the schema versions of the
  /// row and of the type (the first thing to check after a change of the type) — or, for a `payload`
  /// nested deeper than ``JSONDepth/limit`` (written by another program, or before the limit was
  /// checked), that depth: no type can read it.
  package static func undecodable(
    _ error: any Error, key: String, version: Int64, stored: Int, current: Int, payload: Data? = nil
  ) -> PersistentLiveDataError {
    if case DecodingError.dataCorrupted = error, let payload {
      let depth = JSONDepth.deepest(in: payload)
      if depth > JSONDepth.limit {
        return .undecodable(
          key: key, version: version,
          reason: "the stored JSON is nested \(depth) levels deep, deeper than the \(JSONDepth.limit) "
            + "levels JSONDecoder reads")
      }
    }
    let schema =
      stored == current
      ? "stored with schema version \(stored), the type's current one"
      : "stored with schema version \(stored), upgraded to schema version \(current)"
    return .undecodable(key: key, version: version, reason: "\(describe(error)) (\(schema))")
  }

  /// A short reason without payload contents.
  static func describe(_ error: any Error) -> String {
    switch error {
    case DecodingError.typeMismatch(let type, let context):
      return "expected \(type) at \(path(context.codingPath))"
    case DecodingError.valueNotFound(let type, let context):
      return "missing \(type) value at \(path(context.codingPath))"
    case DecodingError.keyNotFound(let key, let context):
      return "missing key \"\(key.stringValue)\" at \(path(context.codingPath))"
    case DecodingError.dataCorrupted(let context):
      return "invalid data at \(path(context.codingPath))"
    case EncodingError.invalidValue(_, let context):
      return "invalid value at \(path(context.codingPath)): \(context.debugDescription)"
    default:
      return String(describing: type(of: error))
    }
  }

  private static func path(_ codingPath: [any CodingKey]) -> String {
    codingPath.isEmpty ? "the top level" : codingPath.map(\.stringValue).joined(separator: ".")
  }
}
