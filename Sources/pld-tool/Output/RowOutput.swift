import Foundation
import PersistentLiveData

/// A stored row as pld-tool shows it: parsed value, sizes and times.
struct RowOutput {
  let row: StoredRow
  /// The payload parsed, or nil when it is not valid JSON (a damaged row) or nested too deep.
  let value: JSONValue?
  /// How deeply the payload nests arrays and objects when that is deeper than ``JSONDepth/limit`` (no
  /// decoder reads it, and it is not parsed); nil otherwise.
  let tooDeep: Int?

  init(_ row: StoredRow) {
    self.row = row
    do {
      value = try JSONParser.parse(bytes: Array(row.payload))
      tooDeep = nil
    } catch {
      value = nil
      // The parser stopped at the limit; the whole depth is counted without recursion.
      tooDeep = error.depth.map { _ in JSONDepth.deepest(in: row.payload) }
    }
  }

  /// The error of a command that must show the value but cannot: a payload nested too deep.
  func unshowable(database: String) -> InspectionError? {
    tooDeep.map {
      InspectionError.payloadTooDeep(path: database, key: row.key, version: row.version, depth: $0)
    }
  }

  /// The payload as text, for a damaged row.
  var rawPayload: String { String(decoding: row.payload, as: UTF8.self) }

  /// The row as a JSON object: `key`, `version`, `writtenAt`, `size`, `schemaVersion` (the value type's
  /// schema version it was written with), `author` and `reason` (each only when recorded), `value` (and
  /// `rawPayload`, the stored text, with `value` null when the payload is not valid JSON).
  var json: JSONValue {
    var members: [JSONValue.Member] = [
      .init("key", .string(row.key)),
      .init("version", .integer(row.version)),
      .init("writtenAt", .string(HumanFormat.iso8601(milliseconds: row.writtenAtMilliseconds))),
      .init("size", .integer(row.payload.count)),
      .init("schemaVersion", .integer(row.schemaVersion)),
    ]
    if let author = row.attribution?.author { members.append(.init("author", .string(author))) }
    if let reason = row.attribution?.reason { members.append(.init("reason", .string(reason))) }
    members.append(.init("value", value ?? .null))
    if value == nil { members.append(.init("rawPayload", .string(rawPayload))) }
    return .object(members)
  }

  /// The value as pretty JSON, or the stored text escaped and marked when it is not JSON (a note when
  /// it is too deep).
  var prettyValue: String {
    value?.pretty ?? unparsed
  }

  /// The value as compact JSON, or the stored text escaped and marked when it is not JSON (a note when
  /// it is too deep).
  var compactValue: String {
    value?.compact ?? unparsed
  }

  private var unparsed: String {
    if let tooDeep {
      return "(not shown: nested \(tooDeep) levels deep, deeper than the \(JSONDepth.limit) levels a "
        + "decoder reads)"
    }
    return "(not valid JSON) " + TerminalText.escaped(rawPayload)
  }

  /// `version 7 · 2025-11-21 07:21:30 (5 min ago) · 18 B · schema 2`, then `· by ops · "INC-42"` when
  /// the version records an author or a reason.
  var heading: String {
    "version \(row.version) · \(HumanFormat.timeWithAge(milliseconds: row.writtenAtMilliseconds)) · "
      + HumanFormat.size(row.payload.count) + " · schema \(row.schemaVersion)" + attributionSuffix
  }

  /// ` · by ops · "INC-42"`: the author and the reason, escaped for a terminal; empty when neither is
  /// recorded.
  var attributionSuffix: String {
    var text = ""
    if let author = row.attribution?.author { text += " · by " + TerminalText.escaped(author) }
    if let reason = row.attribution?.reason { text += " · " + TerminalText.quoted(reason) }
    return text
  }
}
