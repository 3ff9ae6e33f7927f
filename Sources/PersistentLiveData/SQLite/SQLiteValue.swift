package import Foundation

/// A value to bind to a statement parameter, for the helpers that take a list of bindings.
///
/// The hot paths bind directly with the typed `SQLiteStatement.bind(_:at:)` overloads; this enum is for
/// one-off queries such as ``SQLiteConnection/scalarInt64(_:_:)``.
///
/// ```swift
/// let count = try connection.scalarInt64(
///   "SELECT count(*) FROM pld_values WHERE key = ?", [.text("settings")])
/// ```
package enum SQLiteValue: Sendable, Hashable {
  /// A 64-bit integer.
  case integer(Int64)
  /// A double.
  case real(Double)
  /// UTF-8 text, bound with its byte length (embedded NUL bytes survive).
  case text(String)
  /// Bytes; an empty `Data` binds as a zero-length blob, not NULL.
  case blob(Data)
  /// SQL NULL.
  case null
}
