/// This release of the library, as a shared store's replicas record it (`pld_replicas`) and `pld-tool`
/// shows it: which releases run side by side on one database.
///
/// ```swift
/// logger.info("starting", metadata: ["library": "\(LibraryVersion.current)"])
/// ```
package enum LibraryVersion {
  /// Raised with every release (CHANGELOG.md); `-dev` between releases.
  package static let current = "0.4.0-dev"
}
