import Synchronization

/// A callback registered with a ``LiveData``, ``FutureEvent`` or ``SingleEvent``.
///
/// Observers are compared by identity: registering the same instance twice is refused, and
/// ``LiveData/remove(observer:)`` removes exactly that instance. ``cancel()`` removes the observer from
/// everything it is registered with and may be called from any thread; once it returns, no new call of
/// `update` starts.
///
/// ```swift
/// let observer = Observer<Int> { count in label.text = "\(count)" }
/// counter.observe(owner: screen, observer: observer)
/// // later, from any thread:
/// observer.cancel()
/// ```
public final class Observer<Value: Sendable>: Cancellable, Hashable {
  /// The callback, always called on the main actor.
  let update: @MainActor (Value) -> Void
  private let cancelled = Atomic<Bool>(false)
  /// The registries this observer is in, so that `cancel()` can reach them from any thread.
  private let hosts = Locked<[ObjectIdentifier: WeakObserverHost]>([:])

  /// Creates an observer that calls `update` with each value delivered to it.
  ///
  /// ```swift
  /// let printer = Observer<String> { print("name is now", $0) }
  /// name.observeForever(observer: printer)
  /// ```
  /// - Parameter update: Called on the main actor with each delivered value.
  public init(update: @escaping @MainActor (Value) -> Void) {
    self.update = update
  }

  /// An observer that passes `owner` to `onChange` without retaining it, and does nothing once it is gone.
  @MainActor static func passingOwner<Owner: AnyObject>(
    _ owner: Owner, _ onChange: @escaping @MainActor (Owner, Value) -> Void
  ) -> Observer {
    Observer { [weak owner] value in
      guard let owner else { return }
      onChange(owner, value)
    }
  }

  /// Whether ``cancel()`` has been called.
  var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Removes the observer from every LiveData or event it is registered with.
  ///
  /// Callable from any thread and idempotent. No callback starts after it returns; the bookkeeping
  /// (``LiveData/hasObservers``, `onInactive`) catches up on the main actor.
  ///
  /// ```swift
  /// let observer = settings.observeForever { apply($0) }
  /// observer.cancel()
  /// ```
  public func cancel() {
    guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let registered = hosts.withLock { hosts in
      defer { hosts.removeAll() }
      return Array(hosts.values)
    }
    for entry in registered {
      entry.host?.observerWasCancelled(ObjectIdentifier(self))
    }
  }

  func attach(to host: any ObserverHost) {
    hosts.withLock { $0[ObjectIdentifier(host)] = WeakObserverHost(host: host) }
  }

  func detach(from host: any ObserverHost) {
    _ = hosts.withLock { $0.removeValue(forKey: ObjectIdentifier(host)) }
  }

  /// Identity: two observers are equal only if they are the same instance.
  ///
  /// ```swift
  /// let a = Observer<Int> { _ in }
  /// a == a                        // true
  /// a == Observer<Int> { _ in }   // false
  /// ```
  /// - Parameters:
  ///   - lhs: An observer.
  ///   - rhs: Another observer.
  /// - Returns: `true` if both are the same instance.
  public static func == (lhs: Observer, rhs: Observer) -> Bool { lhs === rhs }

  /// Hashes the instance identity.
  ///
  /// ```swift
  /// var observers: Set<Observer<Int>> = [observer]
  /// ```
  /// - Parameter hasher: The hasher to feed with the object identifier.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Something observers are registered with; told when one of them is cancelled from any thread.
protocol ObserverHost: AnyObject, Sendable {
  func observerWasCancelled(_ id: ObjectIdentifier)
}

struct WeakObserverHost: Sendable {
  weak var host: (any ObserverHost)?
}
