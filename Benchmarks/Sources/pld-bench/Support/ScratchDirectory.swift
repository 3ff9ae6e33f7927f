import Foundation

/// A fresh folder under the system's temporary directory (a real disk, not /dev/shm), removed when
/// the benchmark is done with it. Each contender gets its own database file in it.
///
/// ```swift
/// let scratch = try ScratchDirectory()
/// let path = try scratch.freshFile("library-full.db")
/// ```
final class ScratchDirectory {
  let path: String
  private var files = 0

  init() throws {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("pld-bench-XXXXXX").path
    var template = Array(base.utf8CString)
    guard let created = mkdtemp(&template) else {
      throw ScratchError(description: "cannot create a folder like \(base): errno \(errno)")
    }
    path = String(cString: created)
  }

  deinit {
    try? FileManager.default.removeItem(atPath: path)
  }

  /// The path of a database file that does not exist yet, in its own subfolder so that its -wal and
  /// -shm files never meet another contender's.
  func freshFile(_ name: String) throws -> String {
    files += 1
    let folder = "\(path)/\(files)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    return "\(folder)/\(name)"
  }

  /// Deletes a database file and its -wal and -shm companions.
  func remove(database path: String) {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
  }

  struct ScratchError: Error, CustomStringConvertible {
    let description: String
  }
}
