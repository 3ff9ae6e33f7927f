/// One thing wrong with a store file, found by ``StoreInspector/verify(progress:)``.
///
/// ```swift
/// for problem in try inspector.verify().problems { print(problem) }
/// // version gap: key "settings" is missing versions 4 to 6
/// ```
package enum VerificationProblem: Sendable, Equatable, CustomStringConvertible {
  /// A line of `PRAGMA integrity_check` other than `ok`.
  case integrity(message: String)
  /// The payload of `version` of `key` is not well-formed JSON (`json_valid` is 0).
  case invalidJSON(key: String, version: Int64)
  /// The payload of `version` of `key` nests arrays and objects `depth` levels deep, deeper than
  /// ``JSONDepth/limit``: `JSONDecoder` cannot read it (a store no longer writes such a value).
  case tooDeep(key: String, version: Int64, depth: Int)
  /// Versions `missing` of `key` are absent although older and newer ones are stored.
  case versionGap(key: String, missing: ClosedRange<Int64>)

  /// One line naming the key and versions involved; keys are quoted with control characters escaped.
  package var description: String {
    switch self {
    case .integrity(let message):
      return "integrity: \(EscapedText.quotedForMessage(message))"
    case .invalidJSON(let key, let version):
      return "invalid JSON: version \(version) of key \(EscapedText.quotedForMessage(key))"
    case .tooDeep(let key, let version, let depth):
      return
        "too deep: version \(version) of key \(EscapedText.quotedForMessage(key)) is nested \(depth) levels "
        + "deep, more than the \(JSONDepth.limit) a value can be read back at"
    case .versionGap(let key, let missing):
      let versions =
        missing.count == 1
        ? "version \(missing.lowerBound)" : "versions \(missing.lowerBound) to \(missing.upperBound)"
      return "version gap: key \(EscapedText.quotedForMessage(key)) is missing \(versions)"
    }
  }
}

/// The value schema versions one key's stored versions were written with.
///
/// ```swift
/// for key in report.schemaVersions { print(key.key, key.versionCounts) }   // settings [1: 4, 2: 9]
/// ```
package struct KeySchemaVersions: Sendable, Equatable {
  /// The key.
  package var key: String
  /// How many stored versions have each ``/PersistentLiveDataBackend/PersistentValue/schemaVersion``.
  package var versionCounts: [Int: Int]

  /// The schema versions present, ascending.
  package var schemaVersions: [Int] { versionCounts.keys.sorted() }
}

/// The result of ``StoreInspector/verify(progress:)``: what was checked and what is wrong.
package struct VerificationReport: Sendable, Equatable {
  /// The number of keys checked.
  package var keyCount: Int
  /// The number of stored versions checked.
  package var rowCount: Int
  /// Everything found wrong, integrity problems first, then rows by key and version.
  package var problems: [VerificationProblem]
  /// The value schema versions present, per key, in the keys' byte order (not a problem: a store holds
  /// the versions every build of a type wrote).
  package var schemaVersions: [KeySchemaVersions] = []

  /// Whether nothing is wrong.
  package var isOK: Bool { problems.isEmpty }
}

extension StoreInspector {
  /// Checks the whole file: SQLite's `PRAGMA integrity_check`, that every payload is well-formed JSON
  /// (`json_valid`) nested no deeper than ``JSONDepth/limit``, and that the versions of each key are
  /// gap-free from the oldest kept to the newest; and lists the value schema versions present per key.
  ///
  /// Pruning removes a key's oldest versions, never the ones in between, so a gap means rows were lost or
  /// deleted by something other than the library.
  ///
  /// ```swift
  /// let report = try inspector.verify { done, total in print("\(done)/\(total)") }
  /// print(report.isOK ? "ok" : "\(report.problems.count) problems")
  /// ```
  /// - Parameter progress: Called with (rows checked, rows in total) now and then during the row scan.
  /// - Returns: The report, read in one snapshot of the file.
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file when the file cannot
  ///   be read at all.
  package func verify(progress: (Int, Int) -> Void = { _, _ in }) throws -> VerificationReport {
    try reading {
      try inReadTransaction {
        var problems: [VerificationProblem] = truncation.map { [.integrity(message: $0)] } ?? []
        for line in try Self.checkLines(connection, "PRAGMA integrity_check") where line != "ok" {
          problems.append(.integrity(message: line))
        }
        guard hasValuesTable else {
          return VerificationReport(keyCount: 0, rowCount: 0, problems: problems)
        }
        let damaged = !problems.isEmpty
        let total = try Self.unlessDamaged(damaged) {
          Int(try connection.scalarInt64(InspectionSQL.rowCount) ?? 0)
        }
        guard let total else {
          problems.append(.integrity(message: "the versions could not be read past the damage above"))
          return VerificationReport(keyCount: 0, rowCount: 0, problems: problems)
        }
        progress(0, total)
        let scan = try connection.prepare(InspectionSQL.payloadValidity(schema: schemaVersionColumn))
        var schemaVersions: [KeySchemaVersions] = []
        var keyCount = 0
        var rowCount = 0
        var previous: (key: String, version: Int64)?
        while true {
          guard let stepped = try Self.unlessDamaged(damaged, { try scan.step() })
          else {
            problems.append(
              .integrity(message: "the versions after \(rowCount) could not be read past the damage above"))
            break
          }
          guard stepped else { break }
          let key = scan.text(0)
          let version = scan.int64(1)
          if let previous, StoreKey.same(previous.key, key) {
            if version > previous.version + 1 {
              problems.append(.versionGap(key: key, missing: (previous.version + 1)...(version - 1)))
            }
          } else {
            keyCount += 1
            schemaVersions.append(KeySchemaVersions(key: key, versionCounts: [:]))
          }
          let schemaVersion = Int(clamping: scan.int64(3))
          schemaVersions[schemaVersions.count - 1].versionCounts[schemaVersion, default: 0] += 1
          // Depth first: past SQLite's own nesting limit `json_valid` says 0 as well.
          let depth = scan.isNull(4) ? 0 : scan.withUnsafeBytes(ofColumn: 4) { JSONDepth.deepest(in: $0) }
          if depth > JSONDepth.limit {
            problems.append(.tooDeep(key: key, version: version, depth: depth))
          } else if scan.int64(2) != 1 {
            problems.append(.invalidJSON(key: key, version: version))
          }
          previous = (key, version)
          rowCount += 1
          if rowCount % 1_000 == 0 { progress(rowCount, total) }
        }
        progress(rowCount, total)
        return VerificationReport(
          keyCount: keyCount, rowCount: rowCount, problems: problems, schemaVersions: schemaVersions)
      }
    }
  }
}
