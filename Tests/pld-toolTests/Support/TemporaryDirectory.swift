import Foundation

/// A fresh directory under the system's temporary directory, removed when released.
final class TemporaryDirectory: Sendable {
  /// The directory.
  let url: URL

  init(prefix: String = "pld-toolTests") throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
  }

  /// The directory's path.
  var path: String { url.path }

  /// The path of `name` inside the directory (nothing is created).
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `text` to `name` and returns its path.
  @discardableResult
  func write(_ text: String, to name: String) throws -> String {
    let path = path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// The bytes of `name` and of its `-wal` file, to prove a store was not changed. A missing `-wal` file
  /// counts as an empty one: an SQLite reader of a WAL database may create it empty, as SQLite does.
  func snapshot(_ name: String) -> [Data?] {
    [
      FileManager.default.contents(atPath: path(name)),
      FileManager.default.contents(atPath: path(name) + "-wal") ?? Data(),
    ]
  }

  /// Removes the directory. Idempotent.
  func remove() {
    try? FileManager.default.removeItem(at: url)
  }

  deinit { remove() }
}
