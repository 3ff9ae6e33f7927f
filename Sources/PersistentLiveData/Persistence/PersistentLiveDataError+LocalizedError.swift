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
