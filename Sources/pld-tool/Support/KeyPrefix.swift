/// `--prefix P` of `keys`, `export` and `watch`: keys are compared by their UTF-8 bytes, as the store
/// compares them, never by Swift's `String` (canonically equivalent spellings are different keys).
///
/// ```swift
/// statistics.filter { KeyPrefix.matches($0.key, "todo/") }
/// ```
enum KeyPrefix {
  /// Whether `key` starts with `prefix` byte for byte; true for every key when there is no prefix.
  static func matches(_ key: String, _ prefix: String?) -> Bool {
    guard let prefix else { return true }
    return key.utf8.starts(with: prefix.utf8)
  }
}
