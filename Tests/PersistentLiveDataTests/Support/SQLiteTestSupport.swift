import Foundation
import PLDTestSupport

@testable import PersistentLiveData

/// SQLite result codes the tests compare against (the tests do not import the C module).
enum SQLiteCode {
  static let error: Int32 = 1
  static let busy: Int32 = 5
  static let readOnly: Int32 = 8
  static let cantOpen: Int32 = 14
  static let constraint: Int32 = 19
  static let misuse: Int32 = 21
  static let range: Int32 = 25
  static let notADatabase: Int32 = 26
  static let constraintPrimaryKey: Int32 = 1555
  static let cantOpenSymlink: Int32 = 1550
}

extension TemporaryDirectory {
  /// Opens (creating) a read-write database `name` in the directory.
  func openDatabase(_ name: String = "test.db") throws -> SQLiteConnection {
    try SQLiteConnection(path: path(name), mode: .readWrite, create: true)
  }
}

/// Runs `body` and returns the ``SQLiteError`` it throws, or `nil` if it throws nothing or another error.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? {
  do {
    try body()
    return nil
  } catch let error as SQLiteError {
    return error
  } catch {
    return nil
  }
}
