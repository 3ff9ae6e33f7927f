import PersistentLiveData

/// Every use of write attribution (who wrote a version, and why) by `pld-tool serve`, in one place.
///
/// The inspector shows each version's author and reason (`author` and `reason` in the JSON, null when a
/// version was written without them), and records its own rollbacks with the author ``author``.
///
/// ```swift
/// let fields = ServeAttribution.of(row)  // nil: written without an attribution
/// let version = try ServeAttribution.recording { try store.rollbackJSON(key: key, to: 3) }
/// ```
enum ServeAttribution {
  /// The author of the versions the inspector writes.
  static let author = "pld-tool serve"

  /// Who wrote a version, and why; either may be nil.
  struct Fields: Sendable, Equatable {
    var author: String?
    var reason: String?

    init(author: String?, reason: String?) {
      self.author = author
      self.reason = reason
    }

    init(_ attribution: WriteAttribution) {
      self.init(author: attribution.author, reason: attribution.reason)
    }
  }

  /// Whether the store records attribution: the keys' list then reads each key's latest row for it.
  static let isRecorded = true

  /// The attribution recorded with a stored row, or nil when it was written without one.
  static func of(_ row: StoredRow) -> Fields? {
    row.attribution.map(Fields.init)
  }

  /// The attribution in effect for the inspector's writes.
  private static var recorded: WriteAttribution { WriteAttribution(author: author) }

  /// Runs `body` so that what it writes is recorded with the author ``author``.
  static func recording<T>(_ body: () throws -> T) rethrows -> T {
    try WriteAttribution.$current.withValue(recorded) { try body() }
  }

  /// Runs `body` so that what it writes is recorded with the author ``author``.
  static func recording<T>(_ body: () async throws -> T) async rethrows -> T {
    try await WriteAttribution.$current.withValue(recorded) { try await body() }
  }
}
