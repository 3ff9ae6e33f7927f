/// Why a ``StoreInspector`` could not answer, for the cases
/// ``/PersistentLiveDataBackend/PersistentLiveDataError`` has no words for.
///
/// Everything else an inspector reports (not a database, another application's file, a newer schema, a
/// damaged file, SQLite failures) is a ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the
/// file. Descriptions are one sentence; keys and paths are quoted with control characters escaped, so
/// printing one on a terminal is safe.
///
/// ```swift
/// do {
///   let inspector = try StoreInspector(path: path)
///   _ = try inspector.row(key: "settings", version: 3)
/// } catch let error as InspectionError {
///   print(error)   // "Version 3 of key "settings" in "app.db" has been pruned; the oldest kept is 5."
/// }
/// ```
package enum InspectionError: Error, CustomStringConvertible, Equatable, Sendable {
  /// Nothing exists at `path`; an inspector never creates a file.
  case missingFile(path: String)
  /// No version of `key` is stored in the file.
  case unknownKey(path: String, key: String)
  /// `version` of `key` is not stored: never written (above `latest`), pruned (below `oldest`) or missing.
  /// `removedAt` is the version the key's last deletion took, if it was deleted (it and every version
  /// below it are gone with that deletion).
  case unknownVersion(
    path: String, key: String, version: Int64, oldest: Int64, latest: Int64, removedAt: Int64?)
  /// The stored payload of `version` of `key` is not valid JSON.
  case invalidPayload(path: String, key: String, version: Int64)
  /// The stored payload of `version` of `key` nests arrays and objects `depth` levels deep, deeper than
  /// ``JSONDepth/limit``: no decoder reads it, and it is not shown.
  case payloadTooDeep(path: String, key: String, version: Int64, depth: Int)
  /// Nothing can be read from the file: `reason` says why (a truncation that took the tables'
  /// definitions). Only a backup holds its contents.
  case unreadable(path: String, reason: String)

  /// One sentence naming the file, key and version involved.
  ///
  /// ```swift
  /// InspectionError.unknownKey(path: "app.db", key: "theme").description
  /// // Key "theme" is not stored in "app.db".
  /// ```
  package var description: String {
    switch self {
    case .missingFile(let path):
      return "\(EscapedText.quotedForMessage(path)) does not exist."
    case .unknownKey(let path, let key):
      return
        "Key \(EscapedText.quotedForMessage(key)) is not stored in \(EscapedText.quotedForMessage(path))."
    case .unknownVersion(let path, let key, let version, let oldest, let latest, let removedAt):
      let subject =
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) in \(EscapedText.quotedForMessage(path))"
      if version < 1 {
        return "\(subject) does not exist; versions start at 1."
      }
      if version > latest {
        return "\(subject) does not exist; the latest is \(latest)."
      }
      if let removedAt, version == removedAt {
        return "\(subject) holds no value: the key was deleted at that version; the oldest kept is \(oldest)."
      }
      if let removedAt, version < removedAt {
        return "\(subject) was deleted with the key at version \(removedAt); the oldest kept is \(oldest)."
      }
      if version < oldest {
        return "\(subject) has been pruned; the oldest kept is \(oldest)."
      }
      return "\(subject) is missing; versions \(oldest) to \(latest) are kept."
    case .invalidPayload(let path, let key, let version):
      return
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) in \(EscapedText.quotedForMessage(path)) is not valid JSON."
    case .payloadTooDeep(let path, let key, let version, let depth):
      return
        "Version \(version) of key \(EscapedText.quotedForMessage(key)) in \(EscapedText.quotedForMessage(path)) "
        + "nests arrays and objects \(depth) levels deep, deeper than the \(JSONDepth.limit) levels JSONDecoder "
        + "reads back: no application can read it. Write a value over it (pld-tool set, or rollback)."
    case .unreadable(let path, let reason):
      return
        "Nothing can be read from \(EscapedText.quotedForMessage(path)) (\(reason)); restore a backup. The file was left as it is."
    }
  }

}
