import PersistentLiveData

/// A key as the inspector lists it: its current version and what is known about it.
struct KeySummary: Sendable, Equatable {
  var key: String
  var version: Int64
  var writtenAtMilliseconds: Int64
  /// The value schema version the current version was written with; nil where the store does not say.
  var schemaVersion: Int?
  /// How many versions are kept; nil where the store does not say.
  var versions: Int?
  /// `"all"`, a number of versions, or null when no retention is recorded for the key.
  var retention: JSONValue
  var attribution: ServeAttribution.Fields?

  /// `{key, version, writtenAt, schemaVersion, author, reason, retention, versions}`.
  var json: JSONValue {
    .object([
      .init("key", .string(key)),
      .init("version", .integer(version)),
      .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: writtenAtMilliseconds))),
      .init("schemaVersion", schemaVersion.map { .integer($0) } ?? .null),
      .init("author", attribution?.author.map(JSONValue.string) ?? .null),
      .init("reason", attribution?.reason.map(JSONValue.string) ?? .null),
      .init("retention", retention),
      .init("versions", versions.map { .integer($0) } ?? .null),
    ])
  }
}

/// One stored version of a key, as the timeline shows it.
struct VersionEntry: Sendable {
  var key: String
  var version: Int64
  var writtenAtMilliseconds: Int64
  var schemaVersion: Int?
  var size: Int?
  /// The value, or nil when the stored text is not valid JSON (then ``rawPayload`` holds it).
  var value: JSONValue?
  var rawPayload: String?
  var attribution: ServeAttribution.Fields?

  init(_ row: StoredRow) {
    let output = RowOutput(row)
    key = row.key
    version = row.version
    writtenAtMilliseconds = row.writtenAtMilliseconds
    schemaVersion = row.schemaVersion
    size = row.payload.count
    value = output.value
    rawPayload = output.value == nil ? output.compactValue : nil
    attribution = ServeAttribution.of(row)
  }

  init(key: String, version: Int64, writtenAtMilliseconds: Int64, value: JSONValue?) {
    self.key = key
    self.version = version
    self.writtenAtMilliseconds = writtenAtMilliseconds
    self.value = value
  }

  /// The history's JSON of this version, with the diff from `previous` (the version stored before it,
  /// if any): `{key, version, writtenAt, schemaVersion, size, author, reason, value, diffFrom, diff}`.
  func json(previous: VersionEntry?) -> JSONValue {
    var members: [JSONValue.Member] = [
      .init("key", .string(key)),
      .init("version", .integer(version)),
      .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: writtenAtMilliseconds))),
      .init("schemaVersion", schemaVersion.map { .integer($0) } ?? .null),
      .init("size", size.map { .integer($0) } ?? .null),
      .init("author", attribution?.author.map(JSONValue.string) ?? .null),
      .init("reason", attribution?.reason.map(JSONValue.string) ?? .null),
      .init("value", value ?? .null),
      .init("valueText", value.map { .string($0.pretty) } ?? .null),
    ]
    if let rawPayload { members.append(.init("rawPayload", .string(rawPayload))) }
    if let previous {
      members.append(.init("diffFrom", .integer(previous.version)))
      if let old = previous.value, let new = value {
        let changes = JSONDiff.changes(from: old, to: new)
        members.append(.init("diff", .array(changes.map(Self.json))))
      } else {
        members.append(.init("diff", .null))
      }
    } else {
      members.append(.init("diffFrom", .null))
      members.append(.init("diff", .null))
    }
    return .object(members)
  }

  /// A change as `pld-tool diff --json` gives it, with `line`, the line `pld-tool diff` prints for it.
  static func json(_ change: JSONDiff.Change) -> JSONValue {
    guard case .object(var members) = PLDTool.Diff.json(change) else { return .null }
    members.append(.init("line", .string(PLDTool.Diff.line(change))))
    return .object(members)
  }
}

/// A version committed since the inspector last looked, as `GET /api/events` sends it.
struct VersionEvent: Sendable {
  var key: String
  var version: Int64
  var writtenAtMilliseconds: Int64
  /// The key's summary after this version, when it is the key's latest.
  var summary: KeySummary?

  /// `{key, version, writtenAt, writtenAtMs, summary?}`.
  var json: JSONValue {
    var members: [JSONValue.Member] = [
      .init("key", .string(key)),
      .init("version", .integer(version)),
      .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: writtenAtMilliseconds))),
      .init("writtenAtMs", .integer(writtenAtMilliseconds)),
    ]
    if let summary { members.append(.init("summary", summary.json)) }
    return .object(members)
  }
}

/// Why a request to the store failed, as the API answers it.
struct InspectorFailure: Error {
  var status: Int
  var message: String
}
