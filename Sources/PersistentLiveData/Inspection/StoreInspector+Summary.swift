/// What a store file holds at a glance: its schema, its SQLite settings, its size and how many keys and
/// versions it stores.
///
/// ```swift
/// let summary = try StoreInspector(path: "app.db").summary()
/// print("\(summary.keyCount) keys, \(summary.rowCount) versions, \(summary.totalFileSize) bytes")
/// ```
package struct StoreSummary: Sendable, Equatable {
  /// The path the inspector was opened with.
  package var path: String
  /// How the inspector opened the file.
  package var accessMode: StoreInspector.AccessMode
  /// The schema version recorded in the file (0 for a database without tables).
  package var schemaVersion: Int
  /// `PRAGMA journal_mode`, e.g. `wal` (from the file header when opened immutable).
  package var journalMode: String
  /// `PRAGMA page_size` in bytes.
  package var pageSize: Int
  /// The size of the database file in bytes.
  package var fileSize: Int64
  /// The size of its `-wal` file in bytes (0 when there is none).
  package var walSize: Int64
  /// The number of keys with at least one stored version; nil when a damaged page kept them from being
  /// counted (``quickCheck`` then says where).
  package var keyCount: Int?
  /// The number of stored versions, all keys together; nil when a damaged page kept them from being
  /// counted.
  package var rowCount: Int?
  /// The lines of `PRAGMA quick_check`: `["ok"]` for a sound file.
  package var quickCheck: [String]
  /// The application the file belongs to (``StoreOptions/applicationIdentifier``), or nil when none is
  /// recorded.
  package var application: String? = nil

  /// The database file and its `-wal` file together, in bytes.
  package var totalFileSize: Int64 { fileSize + walSize }

  /// Whether `PRAGMA quick_check` answered `ok`.
  package var isIntegrityOK: Bool { quickCheck == ["ok"] }
}

extension StoreInspector {
  /// The schema, SQLite settings, sizes, key and version counts, and the result of `PRAGMA quick_check`.
  ///
  /// `quick_check` reads every page (about 0.1 s per 50 MB) but does not compare indexes with tables.
  ///
  /// ```swift
  /// let summary = try inspector.summary()
  /// if !summary.isIntegrityOK { print(summary.quickCheck.joined(separator: "\n")) }
  /// ```
  /// - Returns: The summary, read in one snapshot of the file.
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func summary() throws -> StoreSummary {
    try reading {
      try inReadTransaction {
        var journalMode = try connection.pragmaText("journal_mode")
        if accessMode == .immutable, headerIsWAL { journalMode = "wal" }
        let pageSize = Int(try connection.pragmaInt("page_size"))
        let lines = try Self.checkLines(connection, "PRAGMA quick_check")
        var keyCount: Int? = 0
        var rowCount: Int? = 0
        if hasValuesTable {
          // A damaged page the counts run into leaves them unknown; the rest of the summary still says
          // what the file is and where it is damaged.
          keyCount = try Self.unlessDamaged(lines != ["ok"]) {
            Int(try connection.scalarInt64("SELECT count(*) FROM (\(InspectionSQL.keys))") ?? 0)
          }
          rowCount = try Self.unlessDamaged(lines != ["ok"]) {
            Int(try connection.scalarInt64("SELECT count(*) FROM pld_values") ?? 0)
          }
        }
        return StoreSummary(
          path: path, accessMode: accessMode, schemaVersion: schemaVersion, journalMode: journalMode,
          pageSize: pageSize, fileSize: Self.fileSize(path), walSize: Self.fileSize(path + "-wal"),
          keyCount: keyCount, rowCount: rowCount, quickCheck: lines,
          application: try StoreOpener.recordedApplication(of: connection))
      }
    }
  }

  /// The lines an integrity check (`PRAGMA quick_check` or `integrity_check`) reports. SQLite may stop
  /// such a check on a page it cannot read after reporting others: that failure is one more line.
  static func checkLines(_ connection: SQLiteConnection, _ pragma: String) throws -> [String] {
    let check = try connection.prepare(pragma)
    var lines: [String] = []
    do {
      while try check.step() { lines.append(check.text(0)) }
    } catch let error as SQLiteError where error.isCorrupt {
      lines.append("the check stopped: \(error.message)")
    }
    return lines
  }

  /// `body`'s result, or nil when it fails on a damaged page of a file whose integrity check found
  /// damage (`isDamaged`); on a sound file the failure is thrown.
  static func unlessDamaged<Result>(_ isDamaged: Bool, _ body: () throws -> Result) throws -> Result? {
    do {
      return try body()
    } catch let error as SQLiteError where error.isCorrupt && isDamaged {
      return nil
    }
  }

  /// The size of the file at `path` in bytes, or 0 when it does not exist.
  static func fileSize(_ path: String) -> Int64 {
    guard case .success(let status) = POSIX.status(path) else { return 0 }
    return status.size
  }
}
