import Foundation
import PLDTestSupport

extension TemporaryDirectory {
  /// The bytes of `name` and of its `-wal` file, to prove a store was not changed. A missing `-wal` file
  /// counts as an empty one: an SQLite reader of a WAL database may create it empty, as SQLite does.
  func snapshot(_ name: String) -> [Data?] {
    [
      FileManager.default.contents(atPath: path(name)),
      FileManager.default.contents(atPath: path(name) + "-wal") ?? Data(),
    ]
  }
}
