import Foundation

/// The file-per-value contender (issue 7): what many "defaults" libraries do to save a value — encode
/// it (the library's JSON settings), write a temporary file next to the target, `fsync` it, `rename` it
/// over the target. Only the latest value is kept (no history).
///
/// The folder is not synced after the rename, so a power loss may still bring back the previous file:
/// slightly weaker than `Durability.full`, and one `fsync` cheaper — a lower bound for a durable
/// file write.
///
/// ```swift
/// let files = try AtomicFileStore(folder: folder)
/// try files.set(profile, key: "profile")
/// ```
final class AtomicFileStore {
  let folder: String
  private let encoder = RawVersionedStore.makeEncoder()

  init(folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    self.folder = folder
  }

  /// The file holding the latest value of `key`.
  func path(key: String) -> String { "\(folder)/\(key).json" }

  /// Encodes `value` and atomically replaces the file of `key` with it, synced to disk.
  func set<Value: Encodable>(_ value: Value, key: String) throws {
    let payload = try encoder.encode(value)
    let target = path(key: key)
    let temporary = target + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw AtomicFileError(call: "open", path: temporary, code: errno) }
    do {
      try payload.withUnsafeBytes { bytes in
        var written = 0
        while written < bytes.count {
          let result = write(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
          if result < 0 {
            if errno == EINTR { continue }
            throw AtomicFileError(call: "write", path: temporary, code: errno)
          }
          written += result
        }
      }
      guard fsync(descriptor) == 0 else { throw AtomicFileError(call: "fsync", path: temporary, code: errno) }
    } catch {
      close(descriptor)
      unlink(temporary)
      throw error
    }
    guard close(descriptor) == 0 else { throw AtomicFileError(call: "close", path: temporary, code: errno) }
    guard rename(temporary, target) == 0 else {
      throw AtomicFileError(call: "rename", path: target, code: errno)
    }
  }

  /// The latest value of `key` as stored, or nil if none was written.
  func storedPayload(key: String) -> Data? {
    FileManager.default.contents(atPath: path(key: key))
  }

  /// Deletes the folder and its files.
  func remove() {
    try? FileManager.default.removeItem(atPath: folder)
  }
}

/// A failed system call of ``AtomicFileStore``.
struct AtomicFileError: Error, CustomStringConvertible {
  let call: String
  let path: String
  let code: Int32
  var description: String { "\(call)(\(path)) failed: \(String(cString: strerror(code)))" }
}
