public import Foundation

/// A conditional write found its key at another version than the one it named: nothing was written.
///
/// Thrown as itself by every `set(_:ifVersion:)` form, on both backends, also out of a transaction (which
/// then commits nothing). The condition is decided by the database in the write's own transaction, so a
/// version another process or replica committed fails it even before this process has heard of it.
///
/// ```swift
/// do {
///   try settings.set(edited, ifVersion: versionShownInTheForm)
/// } catch let conflict as VersionConflict {
///   showReloadPrompt("changed meanwhile: now at version \(conflict.actual)")
/// }
/// ```
public struct VersionConflict: Error, Sendable, Equatable, CustomStringConvertible {
  /// The whole key: `"todo/7"` for member `"7"` of collection `"todo"`.
  public let key: String
  /// The version the caller named (0: the key has no version).
  public let expected: Int64
  /// The version found (0: none — never written, or removed).
  public let actual: Int64

  /// A conflict of `key`, found at `actual` where `expected` was named.
  ///
  /// ```swift
  /// let conflict = VersionConflict(key: "settings", expected: 1, actual: 2)
  /// ```
  /// - Parameters:
  ///   - key: The key written.
  ///   - expected: The version the write was conditional on.
  ///   - actual: The version the key was found at.
  public init(key: String, expected: Int64, actual: Int64) {
    self.key = key
    self.expected = expected
    self.actual = actual
  }

  /// One sentence naming the key and both versions.
  ///
  /// ```swift
  /// VersionConflict(key: "settings", expected: 1, actual: 2).description
  /// // Key "settings" is at version 2, not 1: nothing was written.
  /// ```
  public var description: String {
    let found = actual == 0 ? "has no version" : "is at version \(actual)"
    let named = expected == 0 ? "none (create only)" : "\(expected)"
    return "Key \(EscapedText.quotedForMessage(key)) \(found), not \(named): nothing was written."
  }
}

extension VersionConflict: LocalizedError {
  /// The same sentence as ``description``, for `localizedDescription`.
  ///
  /// ```swift
  /// alert.message = conflict.localizedDescription
  /// ```
  public var errorDescription: String? { description }
}
