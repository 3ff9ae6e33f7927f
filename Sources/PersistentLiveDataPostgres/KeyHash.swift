import Crypto
import Foundation

/// How the shared tables identify a key: the SHA-256 of its UTF-8, in lowercase hex.
///
/// A key may be up to 1 MiB; its hash always fits a B-tree index entry and a notification.
///
/// ```swift
/// KeyHash.of("settings")   // "cde0fb0d…", 64 characters
/// ```
enum KeyHash {
  private static let digits = Array("0123456789abcdef".utf8)

  /// One allocation for the text (a catch-up that compares every live key hashes each of them).
  static func of(_ key: String) -> String {
    var hex: [UInt8] = []
    hex.reserveCapacity(64)
    for byte in SHA256.hash(data: Data(key.utf8)) {
      hex.append(digits[Int(byte >> 4)])
      hex.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: hex, as: UTF8.self)
  }
}
