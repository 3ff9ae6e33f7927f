import Foundation
import PLDBenchSQLite3

/// A failed SQLite call of the raw baseline.
struct RawSQLiteError: Error, CustomStringConvertible {
  let code: Int32
  let message: String
  var description: String { "SQLite error \(code): \(message)" }
}

/// A bare SQLite connection: the least a hand-written SQLite client does, so that the library is
/// compared with the cost of SQLite itself. The only file that touches the C API, with
/// ``RawStatement``.
final class RawDatabase {
  private let handle: OpaquePointer

  /// The SQLite library linked in, e.g. `3.40.1`.
  static var libraryVersion: String { String(cString: sqlite3_libversion()) }

  /// Opens (creating) `path` read-write. `NOMUTEX`: the benchmark uses each connection from one thread.
  init(path: String) throws {
    var opened: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard code == SQLITE_OK, let opened else {
      let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close_v2(opened)
      throw RawSQLiteError(code: code, message: "\(message) (\(path))")
    }
    handle = opened
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  /// Runs one or more statements that return no rows.
  func execute(_ sql: String) throws {
    try check(sqlite3_exec(handle, sql, nil, nil, nil))
  }

  /// WAL and the given `synchronous` level (`FULL` or `NORMAL`), as the store sets them.
  func configure(synchronous: String) throws {
    try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous)")
  }

  func prepare(_ sql: String) throws -> RawStatement {
    var statement: OpaquePointer?
    try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
    guard let statement else { throw RawSQLiteError(code: SQLITE_MISUSE, message: "empty statement: \(sql)") }
    return RawStatement(statement, database: self)
  }

  func check(_ code: Int32) throws {
    guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
      throw RawSQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
  }
}

/// A prepared statement of a ``RawDatabase``, reset after each run so it can be reused.
final class RawStatement {
  private let handle: OpaquePointer
  private let database: RawDatabase

  fileprivate init(_ handle: OpaquePointer, database: RawDatabase) {
    self.handle = handle
    self.database = database
  }

  deinit {
    sqlite3_finalize(handle)
  }

  func bind(_ value: Int64, at index: Int32) throws {
    try database.check(sqlite3_bind_int64(handle, index, value))
  }

  /// Binds text with its byte length, copied by SQLite (`SQLITE_TRANSIENT`).
  func bind(_ text: String, at index: Int32) throws {
    var text = text
    try text.withUTF8 { bytes in
      try bindText(bytes.baseAddress, count: bytes.count, at: index)
    }
  }

  /// Binds UTF-8 bytes (a JSON payload) as text.
  func bind(utf8 data: Data, at index: Int32) throws {
    try data.withUnsafeBytes { bytes in
      try bindText(bytes.baseAddress, count: bytes.count, at: index)
    }
  }

  private func bindText(_ bytes: UnsafeRawPointer?, count: Int, at index: Int32) throws {
    guard let bytes else {
      // An empty buffer has no address; a null pointer would bind NULL instead of ''.
      return try "".withCString { try bindText($0, count: 0, at: index) }
    }
    let code = sqlite3_bind_text64(
      handle, index, bytes.assumingMemoryBound(to: CChar.self), UInt64(count),
      pld_bench_sqlite_transient(), UInt8(SQLITE_UTF8))
    try database.check(code)
  }

  /// Steps once: true if a row is available.
  func step() throws -> Bool {
    let code = sqlite3_step(handle)
    try database.check(code)
    return code == SQLITE_ROW
  }

  /// Steps to completion, then resets: for statements without rows.
  func run() throws {
    defer { reset() }
    while try step() {}
  }

  /// Makes the statement ready to run again (bindings are kept).
  func reset() {
    sqlite3_reset(handle)
  }

  func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

  func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

  func text(_ column: Int32) -> String {
    guard let bytes = sqlite3_column_text(handle, column) else { return "" }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  func data(_ column: Int32) -> Data {
    guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
    return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
  }
}
