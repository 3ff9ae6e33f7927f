/// Who wrote a version, and why: recorded with every write made while it is set.
///
/// Set it as a task-local value around the writes it describes; every write made in that task (and its
/// child tasks) records it with the version it commits — `set`, `update`, `rollback(to:)`, `reset()`,
/// `write(_:)`, `PersistentStore/write(_:)`, `PersistentStore/transaction(isolation:_:)` and the shared
/// store's writes alike. It comes back in ``Versioned/attribution`` and `HistoryEntry/attribution`
/// through `history`, `historyEntries` and `changes(since:)`, in this process and in every other one that
/// reads the store. A version written without one reads as nil, as do the versions written before stores
/// recorded attributions.
///
/// ```swift
/// try WriteAttribution.$current.withValue(WriteAttribution(author: "ops", reason: "INC-42")) {
///   try flags.set(FeatureFlags(newCheckout: false))
/// }
/// let latest = try flags.history(limit: 1).first?.attribution   // author "ops", reason "INC-42"
/// ```
///
/// The author is at most ``maximumAuthorBytes`` bytes of UTF-8, the reason at most
/// ``maximumReasonBytes``; a write made with a longer one throws ``WriteAttributionTooLong`` before
/// anything is written.
public struct WriteAttribution: Sendable, Hashable, Codable {
  /// Who made the change: a user name, a service, a job.
  ///
  /// ```swift
  /// let author = try flags.history(limit: 1).first?.attribution?.author   // "ops"
  /// ```
  public var author: String?
  /// Why: a ticket, an incident, a sentence.
  ///
  /// ```swift
  /// let reason = try flags.history(limit: 1).first?.attribution?.reason   // "INC-42"
  /// ```
  public var reason: String?

  /// The longest author recorded, in bytes of UTF-8 (`é` counts two).
  ///
  /// ```swift
  /// let fits = name.utf8.count <= WriteAttribution.maximumAuthorBytes
  /// ```
  public static let maximumAuthorBytes = 256
  /// The longest reason recorded, in bytes of UTF-8 (`é` counts two).
  ///
  /// ```swift
  /// let fits = text.utf8.count <= WriteAttribution.maximumReasonBytes
  /// ```
  public static let maximumReasonBytes = 4_096

  /// Creates an attribution; either part may be left out.
  ///
  /// ```swift
  /// let attribution = WriteAttribution(author: "deploy-bot", reason: "release 4.2")
  /// ```
  /// - Parameters:
  ///   - author: Who makes the change.
  ///   - reason: Why.
  public init(author: String? = nil, reason: String? = nil) {
    self.author = author
    self.reason = reason
  }

  /// The attribution recorded with every write made in this task (and its child tasks) while set.
  ///
  /// A write reads it where it is called: `PersistentStore/write(_:)` and `write(_:)` of a live value
  /// take the caller's, not that of the store's writer thread that commits them; each write inside a
  /// transaction takes the one in effect where it is made.
  ///
  /// ```swift
  /// try WriteAttribution.$current.withValue(.init(author: "ops", reason: "INC-42")) { try flags.set(off) }
  /// ```
  @TaskLocal public static var current: WriteAttribution?

  /// Throws ``WriteAttributionTooLong`` when the author or the reason is over its limit.
  ///
  /// ```swift
  /// try WriteAttribution(author: String(repeating: "é", count: 129)).validate()   // throws: 258 bytes
  /// ```
  /// - Throws: ``WriteAttributionTooLong``, naming the field and the limit.
  public func validate() throws {
    if let author, author.utf8.count > Self.maximumAuthorBytes {
      throw WriteAttributionTooLong(field: .author, byteCount: author.utf8.count)
    }
    if let reason, reason.utf8.count > Self.maximumReasonBytes {
      throw WriteAttributionTooLong(field: .reason, byteCount: reason.utf8.count)
    }
  }

  /// ``current``, checked against the limits: what a write records. Read where the write is called.
  package static func validatedCurrent() throws -> WriteAttribution? {
    guard let current else { return nil }
    try current.validate()
    return current.isEmpty ? nil : current
  }

  /// Whether neither part is set: such an attribution is recorded as none.
  package var isEmpty: Bool { author == nil && reason == nil }

  /// An attribution from two stored columns, nil when both are NULL.
  package init?(storedAuthor author: String?, reason: String?) {
    guard author != nil || reason != nil else { return nil }
    self.init(author: author, reason: reason)
  }
}

/// A write's ``WriteAttribution`` is over a limit: nothing was written.
///
/// ```swift
/// do {
///   try WriteAttribution.$current.withValue(.init(reason: longText)) { try flags.set(off) }
/// } catch let error as WriteAttributionTooLong {
///   print(error)   // "The write's attribution reason is 5000 bytes of UTF-8; the limit is 4096 …"
/// }
/// ```
public struct WriteAttributionTooLong: Error, Sendable, Hashable, CustomStringConvertible {
  /// A part of a ``WriteAttribution``.
  ///
  /// ```swift
  /// if error.field == .reason { shortenReason() }
  /// ```
  public struct Field: Sendable, Hashable, CustomStringConvertible {
    /// ``WriteAttribution/author``.
    ///
    /// ```swift
    /// let field = WriteAttributionTooLong.Field.author
    /// ```
    public static let author = Field(name: "author", limit: WriteAttribution.maximumAuthorBytes)
    /// ``WriteAttribution/reason``.
    ///
    /// ```swift
    /// let field = WriteAttributionTooLong.Field.reason
    /// ```
    public static let reason = Field(name: "reason", limit: WriteAttribution.maximumReasonBytes)

    /// The field's name: `author` or `reason`.
    ///
    /// ```swift
    /// print(error.field.name)   // "author"
    /// ```
    public let name: String
    /// The field's limit in bytes of UTF-8.
    ///
    /// ```swift
    /// print(error.field.limit)   // 256
    /// ```
    public let limit: Int

    /// The field's name.
    ///
    /// ```swift
    /// print(WriteAttributionTooLong.Field.author)   // "author"
    /// ```
    public var description: String { name }
  }

  /// The part over its limit.
  ///
  /// ```swift
  /// print(error.field)   // "reason"
  /// ```
  public let field: Field
  /// Its length in bytes of UTF-8.
  ///
  /// ```swift
  /// print(error.byteCount)   // 4097
  /// ```
  public let byteCount: Int
  /// The limit it is over, in bytes of UTF-8: ``field``'s.
  ///
  /// ```swift
  /// print(error.limit)   // 4096
  /// ```
  public var limit: Int { field.limit }

  /// Creates the error.
  ///
  /// ```swift
  /// let error = WriteAttributionTooLong(field: .author, byteCount: 300)
  /// ```
  /// - Parameters:
  ///   - field: The part over its limit.
  ///   - byteCount: Its length in bytes of UTF-8.
  public init(field: Field, byteCount: Int) {
    self.field = field
    self.byteCount = byteCount
  }

  /// Names the field, its length and the limit.
  ///
  /// ```swift
  /// print(WriteAttributionTooLong(field: .author, byteCount: 257))
  /// ```
  public var description: String {
    "The write's attribution \(field.name) is \(byteCount) bytes of UTF-8; the limit is \(limit) bytes. "
      + "Nothing was written."
  }
}
