import Foundation
import PersistentLiveData

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

extension ScratchDirectory {
  /// A fresh store file `name` holding `keys` keys (``Profile/key(_:)``), one ``Profile`` version each,
  /// written through the library (`.normal`) in `transactions` transactions; closed.
  func profileStore(named name: String, keys: Int, transactions: Int) throws -> String {
    let path = try freshFile(name)
    let store = try PersistentStore(path: path, options: StoreOptions(durability: .normal))
    let batch = max(1, (keys + transactions - 1) / max(1, transactions))
    for start in stride(from: 0, to: keys, by: batch) {
      try store.transaction {
        for index in start..<min(start + batch, keys) {
          try store.liveData(Profile.key(index), default: Profile.sample(0)).set(Profile.sample(index))
        }
      }
    }
    try store.close()
    return path
  }
}
