import Foundation

/// A fresh, uniquely named directory under the system's temporary directory, removed when released.
///
/// Keep it alive for the whole test — ARC may release a local after its last use, so end the test with
/// `defer { directory.remove() }` (which also keeps it alive) or use ``with(_:)``:
///
/// ```swift
/// @Test func opensAFile() throws {
///   let directory = try TemporaryDirectory()
///   defer { directory.remove() }
///   let path = directory.path("store.db")
///   …
/// }
/// ```
final class TemporaryDirectory: Sendable {
  /// The directory.
  let url: URL

  /// Creates `<tmp>/PersistentLiveDataTests-<UUID>` (mode 0700).
  ///
  /// - Parameter prefix: The folder name's prefix, to recognise leftovers.
  /// - Throws: When the directory cannot be created.
  init(prefix: String = "PersistentLiveDataTests") throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
  }

  /// Runs `body` with a new directory and removes it afterwards.
  static func with<Result>(_ body: (TemporaryDirectory) throws -> Result) throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
  }

  /// Runs async `body` with a new directory and removes it afterwards.
  static func with<Result>(_ body: (TemporaryDirectory) async throws -> Result) async throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
  }

  /// The directory's path.
  var path: String { url.path }

  /// The path of `name` inside the directory (nothing is created).
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// The URL of `name` inside the directory (nothing is created).
  func url(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Removes the directory and everything in it. Idempotent.
  func remove() {
    try? FileManager.default.removeItem(at: url)
  }

  deinit { remove() }
}
