/// A key as the store identifies it: by its UTF-8 bytes, exactly.
///
/// Swift's `String ==` and `String` hashing treat canonically equivalent spellings as one string:
/// `"café"` written with U+00E9 and with `e` + U+0301 are `==`. SQLite, PostgreSQL, pld-tool and other
/// processes compare keys byte for byte and keep them apart. A store keys everything it holds in memory
/// by `StoreKey`, so that memory and the file always agree on which row a key names: two spellings are
/// two keys everywhere, each with its own gap-free versions.
///
/// ```swift
/// var heads: [StoreKey: Int64] = [:]
/// heads[StoreKey("caf\u{E9}")] = 3
/// heads[StoreKey("cafe\u{301}")]        // nil: another key
/// StoreKey.same("caf\u{E9}", "cafe\u{301}")   // false
/// ```
package struct StoreKey: Hashable, Sendable, CustomStringConvertible {
  /// The key's text, as the caller spelled it.
  package let text: String

  /// The key `text`, identified by its bytes.
  package init(_ text: String) { self.text = text }

  /// Whether `lhs` and `rhs` name the same key: whether their UTF-8 bytes are equal.
  package static func same(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
  }

  package static func == (lhs: StoreKey, rhs: StoreKey) -> Bool { same(lhs.text, rhs.text) }

  package func hash(into hasher: inout Hasher) {
    var text = text
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }

  package var description: String { text }
}

extension Dictionary where Key == StoreKey {
  /// The entry of the key spelled `key`, byte for byte.
  package subscript(key: String) -> Value? {
    get { self[StoreKey(key)] }
    set { self[StoreKey(key)] = newValue }
  }
}

extension StoreKey {
  /// The longest key either store accepts: 1 MiB of UTF-8.
  static let maximumLength = 1 << 20

  /// Checks the rules every store has for a key: non-empty, at most ``maximumLength`` bytes of UTF-8.
  ///
  /// ```swift
  /// try StoreKey.validate("settings")   // fine
  /// try StoreKey.validate("")           // throws PersistentLiveDataError.invalidKey
  /// ```
  /// - Throws: ``PersistentLiveDataError/invalidKey(key:reason:)``.
  package static func validate(_ key: String) throws {
    if key.isEmpty {
      throw PersistentLiveDataError.invalidKey(key: key, reason: "a key cannot be empty")
    }
    if key.utf8.count > maximumLength {
      throw PersistentLiveDataError.invalidKey(
        key: key, reason: "a key can be at most \(maximumLength) bytes of UTF-8")
    }
  }
}
