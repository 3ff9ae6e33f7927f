@testable import PersistentLiveData

/// Edits store files behind the library's back, to build damaged or future files.
enum SchemaEditor {
  /// Sets `PRAGMA user_version` (the schema version) of the file.
  static func setUserVersion(_ version: Int64, path: String) throws {
    try execute("PRAGMA user_version = \(version)", path: path)
  }

  /// Runs `sql` on the file with a plain read-write connection (creating the file if asked).
  static func execute(_ sql: String, path: String, create: Bool = false) throws {
    let connection = try SQLiteConnection(path: path, mode: .readWrite, create: create)
    defer { connection.close() }
    try connection.busyTimeout(5_000)
    try connection.execute(sql)
  }
}
