public import Foundation

extension PersistentLiveDataError: LocalizedError {
  /// The same sentence as ``description``, so that `error.localizedDescription` (and anything that shows
  /// errors through Foundation) says what happened instead of "The operation could not be completed".
  ///
  /// ```swift
  /// do { try settings.set(newSettings) } catch { showAlert(error.localizedDescription) }
  /// ```
  public var errorDescription: String? { description }
}

extension WriteAttributionTooLong: LocalizedError {
  /// The same sentence as ``description``: it names the field and the limit.
  ///
  /// ```swift
  /// do { try flags.set(off) } catch { showAlert(error.localizedDescription) }
  /// ```
  public var errorDescription: String? { description }
}
