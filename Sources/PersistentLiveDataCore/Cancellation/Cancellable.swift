/// Something that can be stopped: an ``Observer``, a `Task`, the token of
/// ``ScopeLifecycle/observeState(_:)``.
///
/// `cancel()` may be called from any thread, any number of times. Once it returns, no callback of the
/// cancelled thing starts.
///
/// ```swift
/// let observer = liveData.observeForever { print($0) }
/// observer.cancel()      // no further calls
/// observer.cancel()      // harmless
/// ```
public protocol Cancellable: Sendable {
  /// Stops the work or subscription. Idempotent and callable from any thread.
  ///
  /// Once it returns, no new callback of the cancelled thing starts. Calling it again does nothing.
  ///
  /// ```swift
  /// let token: any Cancellable = scope.observeState { print($0) }
  /// token.cancel()
  /// ```
  func cancel()
}

/// Tasks are cancellable, so they can be put in a ``DisposeBag`` or bound with `autoCancel`.
///
/// ```swift
/// Task { for await value in liveData.values { handle(value) } }
///   .autoCancel(scope)
/// ```
extension Task: Cancellable {}
