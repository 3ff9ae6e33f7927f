package import Foundation
internal import PersistentLiveData

/// A fresh, uniquely named directory under the system's temporary directory: each test makes its own.
///
/// The directory is removed by ``remove()`` or, at the latest, when the test process exits — never in
/// `deinit`: ARC may release a local after its last use, and a directory must not disappear in the middle
/// of a test whose last mention of it came early.
///
/// ```swift
/// @Test func opensAFile() throws {
///   let directory = try TemporaryDirectory()
///   defer { directory.remove() }
///   let store = try PersistentStore(path: directory.path("store.db"))
///   …
/// }
/// ```
///
/// ``with(_:_:)`` runs a closure with a new directory and removes it afterwards.
package final class TemporaryDirectory: Sendable {
  /// The directory.
  package let url: URL

  /// Creates `<tmp>/pld-tests-<label>-<UUID>` (mode 0700).
  ///
  /// - Parameter label: A word in the folder's name, to recognise leftovers.
  /// - Throws: When the directory cannot be created.
  package init(_ label: String = "test") throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("pld-tests-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    RemovalAtExit.shared.add(url)
  }

  /// Runs `body` with a new directory and removes it afterwards.
  package static func with<Result>(
    _ label: String = "test", _ body: (TemporaryDirectory) throws -> Result
  ) throws -> Result {
    let directory = try TemporaryDirectory(label)
    defer { directory.remove() }
    return try body(directory)
  }

  /// Runs async `body` with a new directory and removes it afterwards.
  package static func with<Result>(
    _ label: String = "test", _ body: (TemporaryDirectory) async throws -> Result
  ) async throws -> Result {
    let directory = try TemporaryDirectory(label)
    defer { directory.remove() }
    return try await body(directory)
  }

  /// The directory's path.
  package var path: String { url.path }

  /// The path of `name` inside the directory (nothing is created).
  package func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// The URL of `name` inside the directory (nothing is created).
  package func url(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Writes `text` (UTF-8) to `name` and returns its path.
  @discardableResult
  package func write(_ text: String, to name: String) throws -> String {
    try write(Array(text.utf8), to: name)
  }

  /// Writes `bytes` to `name` and returns its path.
  @discardableResult
  package func write(_ bytes: [UInt8], to name: String) throws -> String {
    let path = path(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// The bytes of `name`, or `nil` when it does not exist.
  package func contents(of name: String) -> Data? {
    FileManager.default.contents(atPath: path(name))
  }

  /// Removes the directory and everything in it. Idempotent.
  package func remove() {
    try? FileManager.default.removeItem(at: url)
    RemovalAtExit.shared.forget(url)
  }
}

/// The directories still to remove when the test process exits.
private final class RemovalAtExit: Sendable {
  static let shared = RemovalAtExit()
  private let pending = Locked<Set<URL>>([])

  private init() {
    atexit { RemovalAtExit.shared.removeAll() }
  }

  func add(_ url: URL) {
    pending.withLock { _ = $0.insert(url) }
  }

  func forget(_ url: URL) {
    pending.withLock { _ = $0.remove(url) }
  }

  func removeAll() {
    let all = pending.withLock { $0 }
    for url in all { try? FileManager.default.removeItem(at: url) }
  }
}
