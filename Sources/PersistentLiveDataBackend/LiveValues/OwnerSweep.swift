/// Finds the observers whose owner object is gone while nothing is delivered to them.
///
/// An observer bound to a plain object (neither a lifecycle nor forever) is removed when a delivery
/// finds its owner gone. A store's live value holds itself while observed, so without a delivery it
/// would outlive an owner that went away. The sweep visits, on the main actor every ``interval``, only
/// the values that have such observers, and only while there are any: nothing runs for values observed
/// forever or by lifecycles (a lifecycle removes its observers when it ends).
///
/// ```swift
/// OwnerSweep.shared.watch(value)     // its first observer bound to a plain object registered
/// OwnerSweep.shared.unwatch(value)   // its last one went
/// ```
@MainActor final class OwnerSweep {
  /// A value whose observers the sweep visits.
  @MainActor protocol Swept: AnyObject {
    /// Removes the observers whose owner is gone (possibly releasing the value).
    func removeObserversOfGoneOwners()
  }

  static let shared = OwnerSweep()
  /// How long an owner may be gone before its observers go, when nothing is delivered meanwhile.
  static let interval: Duration = .milliseconds(500)

  private var watched: [ObjectIdentifier: any Swept] = [:]
  private var sweeper: Task<Void, Never>?

  private init() {}

  /// Starts visiting `value`.
  func watch(_ value: any Swept) {
    watched[ObjectIdentifier(value)] = value
    guard sweeper == nil else { return }
    sweeper = Task { @MainActor [weak self] in
      while true {
        try? await Task.sleep(for: Self.interval)
        guard let self else { return }
        self.sweep()
        if self.watched.isEmpty {
          self.sweeper = nil
          return
        }
      }
    }
  }

  /// Stops visiting `value`.
  func unwatch(_ value: any Swept) {
    watched[ObjectIdentifier(value)] = nil
  }

  private func sweep() {
    // A snapshot: a visit may unwatch (and release) the value it visits.
    for value in Array(watched.values) { value.removeObserversOfGoneOwners() }
  }
}
