internal import Foundation

/// What a value type says about its stored form, decided once per live instance: the schema versions it
/// reads and writes, how it reads an older one, and how it writes an older one (expand, then contract).
///
/// Whether `Value` conforms to ``PersistentValue`` is a dynamic cast: done here once, so that decoding a
/// row of the current schema costs one integer comparison more than decoding a plain `Codable` value.
///
/// ```swift
/// let schema = ValueSchema<Settings>()
/// schema.current   // Settings.schemaVersion, or 1 for a plain Codable type
/// schema.written   // Settings.writtenSchemaVersion (default: schemaVersion)
/// ```
struct ValueSchema<Value: Codable & Sendable>: Sendable {
  /// The newest schema version this type reads (at least 1).
  let current: Int
  /// The schema version this type writes: ``PersistentValue/writtenSchemaVersion`` in `1 ... current`.
  let written: Int
  /// Decodes a payload stored with an older schema version through
  /// ``PersistentValue/init(from:storedSchemaVersion:)``; nil for a type that is not a `PersistentValue`.
  private let upgrade: (@Sendable (Data, Int) throws -> Value)?
  /// Encodes a value in the form of ``written`` through ``PersistentValue/encode(to:schemaVersion:)``;
  /// nil when the type writes its current form (`encode(to:)`, no extra work).
  private let downgrade: (@Sendable (Value, String) throws -> Data)?

  init() {
    guard let evolving = Value.self as? any PersistentValue.Type else {
      current = 1
      written = 1
      upgrade = nil
      downgrade = nil
      return
    }
    current = max(1, evolving.schemaVersion)
    written = min(current, max(1, evolving.writtenSchemaVersion))
    upgrade = Self.upgrader(for: evolving)
    downgrade = written < current ? Self.downgrader(for: evolving, schemaVersion: written) : nil
  }

  /// `value` in the stored form of ``written``.
  ///
  /// - Throws: ``PersistentLiveDataError/encodingFailed(key:reason:)`` or
  ///   ``PersistentLiveDataError/valueTooDeep(key:depth:)``, naming `key`.
  func encode(_ value: Value, key: String) throws -> Data {
    guard let downgrade else { return try ValueCodec.encode(value, key: key) }
    return try downgrade(value, key)
  }

  /// An encoding closure for the conforming type, opened once.
  private static func downgrader<Evolving: PersistentValue>(
    for type: Evolving.Type, schemaVersion: Int
  ) -> @Sendable (Value, String) throws -> Data {
    { value, key in
      // Value is Evolving: the cast cannot fail, but is written so that nothing can trap.
      guard let evolving = value as? Evolving else {
        throw PersistentLiveDataError.encodingFailed(
          key: key, reason: "\(Value.self) is not \(Evolving.self)")
      }
      return try ValueCodec.encode(SchemaDowngrade(value: evolving, schemaVersion: schemaVersion), key: key)
    }
  }

  /// Decodes `payload`, stored with `storedSchemaVersion` (older than ``current``), as `Value`.
  ///
  /// - Throws: What the type's decoding throws; a `DecodingError` for a schema version below 1 or a type
  ///   without ``PersistentValue`` conformance.
  func decode(_ payload: Data, storedSchemaVersion: Int) throws -> Value {
    guard let upgrade, storedSchemaVersion >= 1 else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "schema version \(storedSchemaVersion) is not valid"))
    }
    return try upgrade(payload, storedSchemaVersion)
  }

  /// A decoding closure for the conforming type, opened once.
  private static func upgrader<Evolving: PersistentValue>(
    for type: Evolving.Type
  ) -> @Sendable (Data, Int) throws -> Value {
    { payload, storedSchemaVersion in
      let decoder = JSONDecoder()
      if let key = storedSchemaVersionKey { decoder.userInfo[key] = storedSchemaVersion }
      let upgraded = try decoder.decode(SchemaUpgrade<Evolving>.self, from: payload).value
      // Evolving is Value: the cast cannot fail, but is written so that nothing can trap.
      guard let value = upgraded as? Value else {
        throw DecodingError.typeMismatch(
          Value.self, .init(codingPath: [], debugDescription: "\(Evolving.self) is not \(Value.self)"))
      }
      return value
    }
  }
}

/// Decodes a ``PersistentValue`` through ``PersistentValue/init(from:storedSchemaVersion:)``, with the
/// stored schema version passed in the decoder's `userInfo`.
private struct SchemaUpgrade<Evolving: PersistentValue>: Decodable {
  let value: Evolving

  init(from decoder: any Decoder) throws {
    guard let key = storedSchemaVersionKey, let stored = decoder.userInfo[key] as? Int else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "the stored schema version is missing"))
    }
    value = try Evolving(from: decoder, storedSchemaVersion: stored)
  }
}

/// Encodes a ``PersistentValue`` through ``PersistentValue/encode(to:schemaVersion:)``.
private struct SchemaDowngrade<Evolving: PersistentValue>: Encodable {
  let value: Evolving
  let schemaVersion: Int

  func encode(to encoder: any Encoder) throws {
    try value.encode(to: encoder, schemaVersion: schemaVersion)
  }
}

/// The `userInfo` key of the stored schema version (never nil: the name is not empty).
private let storedSchemaVersionKey = CodingUserInfoKey(rawValue: "PersistentLiveData.storedSchemaVersion")
