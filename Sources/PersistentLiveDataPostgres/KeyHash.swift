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
  static func of(_ key: String) -> String {
    SHA256.hash(data: Data(key.utf8)).map { byte in
      let digits = Array("0123456789abcdef")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined()
  }
}
