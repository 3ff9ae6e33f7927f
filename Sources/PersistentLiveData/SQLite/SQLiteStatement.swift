package import Foundation
internal import PLDSQLite3

/// A prepared SQLite statement: bind parameters, step through rows, read columns.
///
/// Created by ``SQLiteConnection/prepare(_:)`` or ``SQLiteConnection/cachedStatement(_:)``; finalized in
/// `deinit` (or when its connection closes, for cached statements). Not thread-safe: it belongs to its
/// connection, and callers serialize access to both.
///
/// Parameters are 1-based, columns 0-based, as in the C API. Text and blobs are bound with their explicit
/// byte length and `SQLITE_TRANSIENT`, so SQLite copies them and embedded NUL bytes survive.
///
/// ```swift
/// let insert = try connection.cachedStatement(
///   "INSERT INTO pld_values(key, version, written_at, payload) VALUES (?, ?, ?, ?)")
/// try insert.bind(key, at: 1)
/// try insert.bind(version, at: 2)
/// try insert.bind(millis, at: 3)
/// try insert.bind(json, at: 4)
/// try insert.run()
/// ```
package final class SQLiteStatement {
  /// The SQL text this statement was prepared from (reported in errors).
  package let sql: String
  /// The `sqlite3_stmt*`; `nil` once finalized.
  private var handle: OpaquePointer?
  /// The owning `sqlite3*`. Valid while `handle` is: `sqlite3_close_v2` keeps a connection with
  /// unfinalized statements alive as a "zombie" until the last one is finalized.
  private let db: OpaquePointer
  /// Shared with the connection, so a statement of a closed connection refuses to step.
  private let connectionState: SQLiteConnection.State

  init(handle: OpaquePointer, db: OpaquePointer, sql: String, connectionState: SQLiteConnection.State) {
    self.handle = handle
    self.db = db
    self.sql = sql
    self.connectionState = connectionState
  }

  deinit {
    if let handle { sqlite3_finalize(handle) }
  }

  /// Finalizes the statement now; later calls throw `SQLITE_MISUSE`. Idempotent.
  func finalize() {
    if let handle { sqlite3_finalize(handle) }
    handle = nil
  }

  @inline(__always)
  private func liveHandle() throws(SQLiteError) -> OpaquePointer {
    guard let handle, connectionState.isOpen else {
      throw SQLiteError.misuse("statement used after its connection was closed", sql: sql)
    }
    return handle
  }

  // MARK: Binding

  /// Binds a 64-bit integer to parameter `index` (1-based).
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` for an index out of range).
  package func bind(_ value: Int64, at index: Int) throws {
    let stmt = try liveHandle()
    try SQLiteError.check(sqlite3_bind_int64(stmt, Int32(clamping: index), value), db: db, sql: sql)
  }

  /// Binds an `Int` as a 64-bit integer to parameter `index` (1-based).
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` for an index out of range).
  package func bind(_ value: Int, at index: Int) throws {
    try bind(Int64(value), at: index)
  }

  /// Binds a double to parameter `index` (1-based).
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` for an index out of range).
  package func bind(_ value: Double, at index: Int) throws {
    let stmt = try liveHandle()
    try SQLiteError.check(sqlite3_bind_double(stmt, Int32(clamping: index), value), db: db, sql: sql)
  }

  /// Binds UTF-8 text to parameter `index` (1-based), with its exact byte length.
  ///
  /// SQLite: "If the third parameter to sqlite3_bind_text() … is negative, then the length of the string
  /// is the number of bytes up to the first zero terminator." An explicit length keeps embedded NUL bytes,
  /// so `"a\0b"` and `"a"` stay distinct keys. An empty string binds as empty text, not NULL.
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
  package func bind(_ value: String, at index: Int) throws {
    let stmt = try liveHandle()
    var value = value
    let rc = value.withUTF8 { utf8 -> Int32 in
      // A NULL data pointer would bind SQL NULL; give an empty string a real (empty) buffer.
      guard let base = utf8.baseAddress, !utf8.isEmpty else {
        return sqlite3_bind_text(stmt, Int32(clamping: index), "", 0, pld_sqlite_transient())
      }
      return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
        sqlite3_bind_text64(
          stmt, Int32(clamping: index), $0, sqlite3_uint64(utf8.count), pld_sqlite_transient(),
          UInt8(SQLITE_UTF8))
      }
    }
    try SQLiteError.check(rc, db: db, sql: sql)
  }

  /// Binds UTF-8 bytes as text to parameter `index` (1-based), with their exact length, without building
  /// a `String` first. The store keeps JSON payloads as TEXT so that SQLite's JSON functions read them.
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
  func bindText(_ utf8: Data, at index: Int) throws {
    let stmt = try liveHandle()
    let rc = utf8.withUnsafeBytes { bytes -> Int32 in
      guard let base = bytes.baseAddress, !bytes.isEmpty else {
        return sqlite3_bind_text(stmt, Int32(clamping: index), "", 0, pld_sqlite_transient())
      }
      return sqlite3_bind_text64(
        stmt, Int32(clamping: index), base.assumingMemoryBound(to: CChar.self), sqlite3_uint64(bytes.count),
        pld_sqlite_transient(), UInt8(SQLITE_UTF8))
    }
    try SQLiteError.check(rc, db: db, sql: sql)
  }

  /// Binds bytes as a blob to parameter `index` (1-based), with their exact length.
  ///
  /// An empty buffer binds a zero-length blob (`sqlite3_bind_zeroblob(…, 0)`), never NULL: SQLite binds
  /// NULL when `sqlite3_bind_blob` gets a NULL data pointer, which an empty buffer may have.
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
  func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
    let stmt = try liveHandle()
    let rc: Int32
    if let base = bytes.baseAddress, !bytes.isEmpty {
      rc = sqlite3_bind_blob64(
        stmt, Int32(clamping: index), base, sqlite3_uint64(bytes.count), pld_sqlite_transient())
    } else {
      rc = sqlite3_bind_zeroblob(stmt, Int32(clamping: index), 0)
    }
    try SQLiteError.check(rc, db: db, sql: sql)
  }

  /// Binds `Data` as a blob to parameter `index` (1-based); empty data is a zero-length blob, not NULL.
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
  package func bind(_ value: Data, at index: Int) throws {
    try value.withUnsafeBytes { try bindBlob($0, at: index) }
  }

  /// Binds a byte array as a blob to parameter `index` (1-based); empty is a zero-length blob, not NULL.
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
  package func bind(_ value: [UInt8], at index: Int) throws {
    try value.withUnsafeBytes { try bindBlob($0, at: index) }
  }

  /// Binds SQL NULL to parameter `index` (1-based).
  ///
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` for an index out of range).
  func bindNull(at index: Int) throws {
    let stmt = try liveHandle()
    try SQLiteError.check(sqlite3_bind_null(stmt, Int32(clamping: index)), db: db, sql: sql)
  }

  /// Binds one ``SQLiteValue`` to parameter `index` (1-based).
  ///
  /// - Throws: ``SQLiteError``.
  package func bind(_ value: SQLiteValue, at index: Int) throws {
    switch value {
    case .integer(let integer): try bind(integer, at: index)
    case .real(let real): try bind(real, at: index)
    case .text(let text): try bind(text, at: index)
    case .blob(let data): try bind(data, at: index)
    case .null: try bindNull(at: index)
    }
  }

  /// Binds `values` to parameters 1…n in order.
  ///
  /// ```swift
  /// try statement.bind([.text(key), .integer(version)])
  /// ```
  /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` when there are more values than parameters).
  package func bind(_ values: [SQLiteValue]) throws {
    for (offset, value) in values.enumerated() {
      try bind(value, at: offset + 1)
    }
  }

  /// The number of parameters (`?`) in the statement.
  var parameterCount: Int {
    guard let handle else { return 0 }
    return Int(sqlite3_bind_parameter_count(handle))
  }

  // MARK: Stepping

  /// Advances to the next row.
  ///
  /// ```swift
  /// while try statement.step() { keys.append(statement.text(0)) }
  /// ```
  /// - Returns: `true` when a row is available, `false` when the statement is done.
  /// - Throws: ``SQLiteError`` with the statement's SQL (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
  package func step() throws -> Bool {
    let stmt = try liveHandle()
    let rc = sqlite3_step(stmt)
    if rc == SQLITE_ROW { return true }
    if rc == SQLITE_DONE { return false }
    throw SQLiteError(rc, db: db, sql: sql)
  }

  /// Steps until the statement is done, ignoring rows (for `INSERT`, `UPDATE`, `DELETE`, DDL), then
  /// resets it so it holds no lock.
  ///
  /// - Throws: ``SQLiteError`` with the statement's SQL.
  package func run() throws {
    defer { reset() }
    while try step() {}
  }

  /// Binds `bindings` to parameters 1…n, then runs the statement to the end (see ``run()``).
  ///
  /// - Throws: ``SQLiteError`` with the statement's SQL.
  package func run(bindings: [SQLiteValue]) throws {
    try bind(bindings)
    try run()
  }

  /// Resets the statement to run again; bindings are kept (see ``clearBindings()``).
  ///
  /// Never throws: `sqlite3_reset` only repeats the error of the last `step`, which `step` already threw.
  /// Resetting also ends the statement's read of the database, so a reader statement should be reset (or
  /// stepped to the end) as soon as its rows are read, or it keeps a WAL snapshot open.
  package func reset() {
    if let handle { sqlite3_reset(handle) }
  }

  /// Sets every parameter back to NULL.
  func clearBindings() {
    if let handle { sqlite3_clear_bindings(handle) }
  }

  // MARK: Columns

  /// The number of columns in a result row.
  var columnCount: Int {
    guard let handle else { return 0 }
    return Int(sqlite3_column_count(handle))
  }

  /// The name of column `index` (0-based), or `""` if out of range.
  func columnName(_ index: Int) -> String {
    guard let handle, let name = sqlite3_column_name(handle, Int32(clamping: index)) else { return "" }
    return String(cString: name)
  }

  // The column readers below rely on SQLite's implementation returning a NULL value (not crashing) for an
  // index out of range or a statement not on a row (`columnMem` in vdbeapi.c); the documentation calls
  // that case undefined, so callers should stay within `columnCount` on a row.

  /// Whether column `index` (0-based) of the current row is SQL NULL.
  package func isNull(_ index: Int) -> Bool {
    guard let handle else { return true }
    return sqlite3_column_type(handle, Int32(clamping: index)) == SQLITE_NULL
  }

  /// Column `index` (0-based) as a 64-bit integer (NULL reads as 0).
  func int64(_ index: Int) -> Int64 {
    guard let handle else { return 0 }
    return sqlite3_column_int64(handle, Int32(clamping: index))
  }

  /// Column `index` (0-based) as a double (NULL reads as 0).
  package func double(_ index: Int) -> Double {
    guard let handle else { return 0 }
    return sqlite3_column_double(handle, Int32(clamping: index))
  }

  /// Column `index` (0-based) as text, with its exact byte length (NUL-safe); NULL reads as `""`.
  ///
  /// SQLite: "call sqlite3_column_text() first to force the result into the desired format, then invoke
  /// sqlite3_column_bytes() to find the size of the result" — which this does, in that order.
  package func text(_ index: Int) -> String {
    guard let handle else { return "" }
    let column = Int32(clamping: index)
    guard let text = sqlite3_column_text(handle, column) else { return "" }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
  }

  /// Column `index` (0-based) as bytes, copied into `Data`; NULL and empty blobs read as empty `Data`.
  package func data(_ index: Int) -> Data {
    withUnsafeBytes(ofColumn: index) { Data($0) }
  }

  /// Column `index` (0-based) as a byte array.
  package func bytes(_ index: Int) -> [UInt8] {
    withUnsafeBytes(ofColumn: index) { Array($0) }
  }

  /// Calls `body` with the bytes of column `index` (0-based) without copying them (text as UTF-8).
  ///
  /// The buffer is SQLite's own and is valid only inside `body`: SQLite frees it at the next `step`,
  /// `reset` or type conversion. NULL gives an empty buffer.
  ///
  /// ```swift
  /// let value = try statement.withUnsafeBytes(ofColumn: 3) { try decoder.decode(Value.self, from: Data($0)) }
  /// ```
  package func withUnsafeBytes<Result, Failure: Error>(
    ofColumn index: Int, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    guard let handle else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    let column = Int32(clamping: index)
    let pointer = sqlite3_column_blob(handle, column)
    let count = Int(sqlite3_column_bytes(handle, column))
    guard let pointer, count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    return try body(UnsafeRawBufferPointer(start: pointer, count: count))
  }
}
