import Foundation
import PersistentLiveData

/// A stored row as pld-tool shows it: parsed value, sizes and times.
struct RowOutput {
  let row: StoredRow
  /// The payload parsed, or nil when it is not valid JSON (a damaged row).
  let value: JSONValue?

  init(_ row: StoredRow) {
    self.row = row
    value = try? JSONParser.parse(bytes: Array(row.payload))
  }

  /// The payload as text, for a damaged row.
  var rawPayload: String { String(decoding: row.payload, as: UTF8.self) }

  /// The row as a JSON object: `key`, `version`, `writtenAt`, `size`, `schemaVersion` (the value type's
  /// schema version it was written with), `value` (and `rawPayload`, the stored text, with `value` null
  /// when the payload is not valid JSON).
  var json: JSONValue {
    var members: [JSONValue.Member] = [
      .init("key", .string(row.key)),
      .init("version", .integer(row.version)),
      .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: row.writtenAtMilliseconds))),
      .init("size", .integer(row.payload.count)),
      .init("schemaVersion", .integer(row.schemaVersion)),
      .init("value", value ?? .null),
    ]
    if value == nil { members.append(.init("rawPayload", .string(rawPayload))) }
    return .object(members)
  }

  /// The value as pretty JSON, or the stored text escaped and marked when it is not JSON.
  var prettyValue: String {
    value?.pretty ?? "(not valid JSON) " + TerminalText.escaped(rawPayload)
  }

  /// The value as compact JSON, or the stored text escaped and marked when it is not JSON.
  var compactValue: String {
    value?.compact ?? "(not valid JSON) " + TerminalText.escaped(rawPayload)
  }

  /// `version 7 · 2025-11-21 07:21:30 (5 min ago) · 18 B · schema 2`.
  var heading: String {
    "version \(row.version) · \(HumanFormat.timeWithAge(milliseconds: row.writtenAtMilliseconds)) · "
      + HumanFormat.size(row.payload.count) + " · schema \(row.schemaVersion)"
  }
}
