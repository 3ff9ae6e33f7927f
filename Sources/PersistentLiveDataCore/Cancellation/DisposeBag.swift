/// A container that cancels everything put into it when it is released or disposed.
///
/// Keep one bag per owner (a screen, a service); put observers, tasks and tokens into it with
/// ``insert(_:)`` or ``Cancellable/disposed(by:)``. When the owner releases the bag, everything in it is
/// cancelled. ``dispose()`` cancels the contents earlier and leaves the bag empty and usable.
///
/// The bag is thread-safe: insert and dispose from any thread. Cancellation runs outside the bag's lock, so
/// a `cancel()` may itself use the bag.
///
/// ```swift
/// final class ProfileScreen {
///   private let bag = DisposeBag()
///
///   func bind() {
///     profile.observeForever { render($0) }.disposed(by: bag)
///     Task { await refresh() }.disposed(by: bag)
///   }
/// }
/// ```
public final class DisposeBag: Sendable {
  private let cancellables = Locked<[any Cancellable]>([])

  /// Creates an empty bag.
  ///
  /// ```swift
  /// let bag = DisposeBag()
  /// ```
  public init() {}

  /// Adds a cancellable, to be cancelled by the next ``dispose()`` or when the bag is released.
  ///
  /// ```swift
  /// bag.insert(observer)
  /// ```
  /// - Parameter cancellable: The thing to cancel later. The bag holds it strongly until then.
  public func insert(_ cancellable: any Cancellable) {
    cancellables.withLock { $0.append(cancellable) }
  }

  /// Cancels everything in the bag now, in insertion order, and empties it. The bag stays usable.
  ///
  /// ```swift
  /// bag.dispose()          // every observer and task in it is cancelled
  /// bag.insert(observer)   // the bag can be filled again
  /// ```
  public func dispose() {
    let taken = cancellables.withLock { cancellables in
      let taken = cancellables
      cancellables.removeAll()
      return taken
    }
    for cancellable in taken {
      cancellable.cancel()
    }
  }

  /// The number of cancellables waiting in the bag.
  var count: Int { cancellables.withLock { $0.count } }

  deinit {
    dispose()
  }
}
