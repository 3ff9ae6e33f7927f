/// A stored value whose type evolves: it says which version of its stored form it writes, and how to
/// read the forms older versions of the type wrote.
///
/// Every version a store writes records the schema version of its type: ``schemaVersion`` for a
/// `PersistentValue`, 1 for any other `Codable` value (and for every version written before schema
/// versions existed). When the type changes its encoding — a field added without a default, a field
/// renamed, a field whose type changed — bump ``schemaVersion`` and read the older forms in
/// ``init(from:storedSchemaVersion:)``. Reading an older version upgrades it in memory, on every read
/// path (restoring, `PersistentLiveData/history(limit:)`, `PersistentLiveData/value(at:)`,
/// `PersistentLiveData/changes(since:)`, `PersistentLiveData/rollback(to:isolation:)`); the stored row is
/// never rewritten. A version written by a *newer* schema than the running type knows is not guessed at:
/// it is ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``, handled by the
/// store's ``DecodeFailurePolicy``.
///
/// ```swift
/// struct Settings: PersistentValue {
///   static let schemaVersion = 2          // schema 1 had no `fontSize`
///   var theme: String
///   var fontSize: Int
///
///   init(theme: String, fontSize: Int) {
///     self.theme = theme
///     self.fontSize = fontSize
///   }
///
///   private struct Schema1: Decodable { var theme: String }
///
///   init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
///     let old = try Schema1(from: decoder)   // only schema 1 is older than 2
///     self.init(theme: old.theme, fontSize: 14)
///   }
/// }
/// ```
///
/// Only the conformance of the stored type itself counts: a `PersistentLiveData<[Settings]>` stores
/// arrays, which are schema 1. See the article "Migrations and evolving values" of PersistentLiveData.
public protocol PersistentValue: Codable, Sendable {
  /// The version of this type's stored form: 1, 2, 3 … Bump it when the encoding changes. Default: 1.
  ///
  /// Values below 1 count as 1.
  ///
  /// ```swift
  /// struct Profile: PersistentValue {
  ///   static let schemaVersion = 3
  ///   var name: String
  /// }
  /// ```
  static var schemaVersion: Int { get }

  /// Decodes a value stored by an older `storedSchemaVersion` (1 ..< ``schemaVersion``), for example by
  /// decoding the old shape and converting it. Default: `init(from:)`.
  ///
  /// Called only for versions stored with an older schema; versions of the current schema are decoded
  /// with `init(from:)`, at no extra cost. Throwing makes that version undecodable
  /// (``PersistentLiveDataError/undecodable(key:version:reason:)``).
  ///
  /// ```swift
  /// init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
  ///   switch storedSchemaVersion {
  ///   case 1: self.init(upgrading: try Schema1(from: decoder))
  ///   default: self.init(upgrading: try Schema2(from: decoder))
  ///   }
  /// }
  /// ```
  /// - Parameters:
  ///   - decoder: The decoder of the stored JSON, at its top level.
  ///   - storedSchemaVersion: The schema version the stored version was written with.
  /// - Throws: Any error, when the stored form cannot be read.
  init(from decoder: any Decoder, storedSchemaVersion: Int) throws

  /// The schema version this build writes — in `set`, `update`, `rollback`, group commit and
  /// transactions alike, on every store. Default: ``schemaVersion``.
  ///
  /// Set it below ``schemaVersion`` to *expand before you contract*: ship a release that reads the new
  /// form (``schemaVersion`` 2) while it still writes the old one (`writtenSchemaVersion` 1), then, once
  /// every replica and app runs it, a release that writes the new form. A rollback between the two never
  /// makes a stored value unreadable to a running build: nothing writes schema 2 until every build reads
  /// it. Values outside `1 ... schemaVersion` are clamped into it.
  ///
  /// ```swift
  /// struct Settings: PersistentValue {
  ///   static let schemaVersion = 2          // reads schema 2 (with `fontSize`)…
  ///   static let writtenSchemaVersion = 1   // …but still writes schema 1
  ///   var theme: String
  ///   var fontSize: Int
  ///
  ///   init(theme: String, fontSize: Int) {
  ///     self.theme = theme
  ///     self.fontSize = fontSize
  ///   }
  ///
  ///   private struct Schema1: Codable { var theme: String }
  ///
  ///   init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
  ///     self.init(theme: try Schema1(from: decoder).theme, fontSize: 14)
  ///   }
  ///
  ///   func encode(to encoder: any Encoder, schemaVersion: Int) throws {
  ///     try Schema1(theme: theme).encode(to: encoder)   // schema 1: no fontSize
  ///   }
  /// }
  /// ```
  static var writtenSchemaVersion: Int { get }

  /// Encodes `self` in the stored form of `schemaVersion`, for a build whose ``writtenSchemaVersion`` is
  /// below ``schemaVersion``; called only then (the current form is written with `encode(to:)`).
  /// Default: `encode(to:)`.
  ///
  /// ```swift
  /// func encode(to encoder: any Encoder, schemaVersion: Int) throws {
  ///   try Schema1(theme: theme).encode(to: encoder)
  /// }
  /// ```
  /// - Parameters:
  ///   - encoder: The encoder of the stored JSON, at its top level.
  ///   - schemaVersion: The form to write: ``writtenSchemaVersion``.
  /// - Throws: Any error; nothing is written then.
  func encode(to encoder: any Encoder, schemaVersion: Int) throws
}

extension PersistentValue {
  /// Schema 1: the type's stored form has never changed.
  ///
  /// ```swift
  /// struct Draft: PersistentValue { var text: String }
  /// Draft.schemaVersion   // 1
  /// ```
  public static var schemaVersion: Int { 1 }

  /// Decodes an older stored form as if it were the current one: `try self.init(from: decoder)`.
  ///
  /// ```swift
  /// struct Draft: PersistentValue { var text = "" }   // reads every schema with init(from:)
  /// ```
  /// - Parameters:
  ///   - decoder: The decoder of the stored JSON.
  ///   - storedSchemaVersion: Ignored.
  /// - Throws: What `init(from:)` throws.
  public init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    try self.init(from: decoder)
  }

  /// The schema this build writes is the one it reads: ``schemaVersion``.
  ///
  /// ```swift
  /// struct Draft: PersistentValue { static let schemaVersion = 2; var text = "" }
  /// Draft.writtenSchemaVersion   // 2
  /// ```
  public static var writtenSchemaVersion: Int { schemaVersion }

  /// Encodes every form as the current one: `try encode(to: encoder)`.
  ///
  /// ```swift
  /// struct Draft: PersistentValue { var text = "" }   // writes every schema with encode(to:)
  /// ```
  /// - Parameters:
  ///   - encoder: The encoder of the stored JSON.
  ///   - schemaVersion: Ignored.
  /// - Throws: What `encode(to:)` throws.
  public func encode(to encoder: any Encoder, schemaVersion: Int) throws {
    try encode(to: encoder)
  }
}
