internal import Foundation

/// Reading what a damaged file still holds (`pld-tool export --salvage`).
///
/// A damaged page stops a scan of `pld_values` where it lies: an ordinary export gives nothing past it.
/// A salvage reads forward from the first row until it meets damage, then backward from the last row
/// until it meets damage again, and reports the rows between the two as unreadable. With one damaged
/// page only the rows of that page are lost; with several, the rows between the first and the last
/// damage are reported as not reached (they may be partly readable, which `sqlite3 .recover` or a backup
/// would tell).
///
/// ```swift
/// let gaps = try inspector.salvageRows { row in export(row) }
/// for gap in gaps { print(gap) }   // the rows between key "a" version 3 and key "c" version 1 …
/// ```
extension StoreInspector {
  /// A stretch of rows a salvage could not read, between the last row read before it and the first row
  /// read after it (nil: the start or the end of the rows).
  package struct UnreadableRows: Sendable, Equatable, CustomStringConvertible {
    package let after: (key: String, version: Int64)?
    package let before: (key: String, version: Int64)?
    /// What SQLite reported at the damage.
    package let detail: String

    package static func == (lhs: Self, rhs: Self) -> Bool {
      lhs.after.map { StoreKey($0.key) } == rhs.after.map { StoreKey($0.key) }
        && lhs.after?.version == rhs.after?.version
        && lhs.before.map { StoreKey($0.key) } == rhs.before.map { StoreKey($0.key) }
        && lhs.before?.version == rhs.before?.version
        && lhs.detail == rhs.detail
    }

    /// "the rows after key "a" version 3 and before key "c" version 1".
    package var description: String {
      func name(_ position: (key: String, version: Int64)) -> String {
        "key \(EscapedText.quotedForMessage(position.key)) version \(position.version)"
      }
      switch (after, before) {
      case (let after?, let before?): return "the rows after \(name(after)) and before \(name(before))"
      case (let after?, nil): return "the rows after \(name(after))"
      case (nil, let before?): return "the rows before \(name(before))"
      case (nil, nil): return "all rows"
      }
    }
  }

  /// Calls `body` with every row of `key` (or of every key) that can be read, by key then version,
  /// reading past damaged pages as the type's documentation says, and returns what could not be read
  /// (empty for a sound file, where it reads exactly what ``forEachRow(key:_:)`` does).
  ///
  /// - Throws: What `body` throws, or an error other than damage (an I/O error, a closed inspector).
  package func salvageRows(key: String? = nil, _ body: (StoredRow) throws -> Void) throws -> [UnreadableRows]
  {
    guard hasValuesTable else { return [] }
    return try reading {
      try inReadTransaction {
        var last: (key: String, version: Int64)?
        let forward = try scan(key: key, descending: false) { row in
          try body(row)
          last = (row.key, row.version)
          return true
        }
        guard let damage = forward else { return [] }
        // From the end back to the damage; the rows come newest first, and are given in order.
        var tail: [StoredRow] = []
        let backward = try scan(key: key, descending: true) { row in
          if let last, !Self.isAfter(row, last) { return false }
          tail.append(row)
          return true
        }
        for row in tail.reversed() { try body(row) }
        let first = tail.last.map { (key: $0.key, version: $0.version) }
        let detail = backward.map { $0 == damage ? damage : "\(damage); \($0)" } ?? damage
        return [UnreadableRows(after: last, before: first, detail: detail)]
      }
    }
  }

  /// Whether `row` comes after `position` in the table's order: keys by their bytes (SQLite's BINARY
  /// collation, not Swift's string order), then versions.
  private static func isAfter(_ row: StoredRow, _ position: (key: String, version: Int64)) -> Bool {
    if StoreKey.same(row.key, position.key) { return row.version > position.version }
    return position.key.utf8.lexicographicallyPrecedes(row.key.utf8)
  }

  /// Whether `row` comes before `position` in the table's order.
  private static func isBefore(_ row: StoredRow, _ position: (key: String, version: Int64)) -> Bool {
    if StoreKey.same(row.key, position.key) { return row.version < position.version }
    return row.key.utf8.lexicographicallyPrecedes(position.key.utf8)
  }

  /// Steps through the rows of `key` (or all) in one direction while `visit` returns true; returns
  /// SQLite's words if a damaged page stopped it, nil if it ended. Other errors are thrown.
  private func scan(
    key: String?, descending: Bool, _ visit: (StoredRow) throws -> Bool
  ) throws -> String? {
    let statement = try connection.prepare(
      key == nil
        ? InspectionSQL.allRows(columns: rowColumns, descending: descending)
        : InspectionSQL.allRowsOfKey(columns: rowColumns, descending: descending))
    defer { statement.finalize() }
    if let key { try statement.bind(key, at: 1) }
    do {
      var previous: (key: String, version: Int64)?
      while try statement.step() {
        let row = Self.keyedRow(statement)
        if let problem = Self.misreading(row) { return problem }
        // A page copied over another (a misplaced write) reads as rows out of the table's order.
        if let previous, descending ? !Self.isBefore(row, previous) : !Self.isAfter(row, previous) {
          return "a row out of order: key \(EscapedText.quotedForMessage(row.key)) version \(row.version) "
            + "after key \(EscapedText.quotedForMessage(previous.key)) version \(previous.version)"
        }
        previous = (row.key, row.version)
        if try !visit(row) { return nil }
      }
      return nil
    } catch let error as SQLiteError where error.isCorrupt {
      return error.message
    }
  }

  /// Why `row` cannot be a version any writer stored — what a damaged or missing page can read as when
  /// SQLite does not see the damage (a truncated file's lost pages read as zeros) — or nil. A salvage
  /// treats such a row as damage: it never exports what no store wrote.
  private static func misreading(_ row: StoredRow) -> String? {
    do {
      try StoreKey.validate(row.key)
    } catch {
      return "a row that is not a stored version: \(error)"
    }
    guard row.version >= 1, row.schemaVersion >= 1 else {
      return "a row that is not a stored version: version \(row.version), schema version \(row.schemaVersion)"
    }
    guard (try? JSONSerialization.jsonObject(with: row.payload, options: .fragmentsAllowed)) != nil else {
      return "a row that is not a stored version: its value is not JSON"
    }
    return nil
  }
}

extension StoreInspector {
  /// The statistics of every key that can be read (`pld-tool keys --salvage`), from the rows a salvage
  /// reads, and the stretches it could not read. A key whose rows reach into an unreadable stretch — the
  /// key named at either end of it — may be missing versions there: its figures count only the rows read.
  ///
  /// ```swift
  /// let (keys, unreadable) = try inspector.salvageKeyStatistics()
  /// ```
  /// - Throws: An error other than damage (an I/O error, a closed inspector).
  package func salvageKeyStatistics() throws -> (keys: [KeyStatistics], unreadable: [UnreadableRows]) {
    var keys: [KeyStatistics] = []
    let unreadable = try salvageRows { row in
      let size = row.payload.count
      if let last = keys.last, StoreKey.same(last.key, row.key) {
        // Rows of a key come by version: the newest so far is the current one.
        keys[keys.count - 1].currentVersion = row.version
        keys[keys.count - 1].versionCount += 1
        keys[keys.count - 1].lastWrittenAtMilliseconds = row.writtenAtMilliseconds
        keys[keys.count - 1].payloadSize = size
        keys[keys.count - 1].totalPayloadSize += size
        keys[keys.count - 1].schemaVersion = row.schemaVersion
      } else {
        keys.append(
          KeyStatistics(
            key: row.key, currentVersion: row.version, oldestVersion: row.version, versionCount: 1,
            lastWrittenAtMilliseconds: row.writtenAtMilliseconds, payloadSize: size, totalPayloadSize: size,
            schemaVersion: row.schemaVersion))
      }
    }
    return (keys, unreadable)
  }
}
