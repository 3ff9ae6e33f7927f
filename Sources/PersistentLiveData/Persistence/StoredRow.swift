package import Foundation

/// One row of `pld_values` as read from the file: the version, when it was written and the JSON payload.
package struct StoredRow: Sendable, Equatable {
  package var key: String
  package var version: Int64
  /// Milliseconds since 1970-01-01T00:00:00Z.
  package var writtenAtMilliseconds: Int64
  package var payload: Data

  package var writtenAt: Date {
    Date(timeIntervalSince1970: Double(writtenAtMilliseconds) / 1000)
  }

  static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }
}
