internal import Foundation

/// What a value type says about its stored form, decided once per live instance: the schema version it
/// writes, and how it reads an older one.
///
/// Whether `Value` conforms to ``PersistentValue`` is a dynamic cast: done here once, so that decoding a
/// row of the current schema costs one integer comparison more than decoding a plain `Codable` value.
///
/// ```swift
/// let schema = ValueSchema<Settings>()
/// schema.current   // Settings.schemaVersion, or 1 for a plain Codable type
/// ```
struct ValueSchema<Value: Codable & Sendable>: Sendable {
  /// The schema version this type writes (at least 1).
  let current: Int
  /// Decodes a payload stored with an older schema version through
  /// ``PersistentValue/init(from:storedSchemaVersion:)``; nil for a type that is not a `PersistentValue`.
  private let upgrade: (@Sendable (Data, Int) throws -> Value)?

  init() {
    guard let evolving = Value.self as? any PersistentValue.Type else {
      current = 1
      upgrade = nil
      return
    }
    current = max(1, evolving.schemaVersion)
    upgrade = Self.upgrader(for: evolving)
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

/// The `userInfo` key of the stored schema version (never nil: the name is not empty).
private let storedSchemaVersionKey = CodingUserInfoKey(rawValue: "PersistentLiveData.storedSchemaVersion")
