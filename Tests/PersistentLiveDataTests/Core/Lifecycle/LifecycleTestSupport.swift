import Synchronization

@testable import PersistentLiveData

/// A shared, ordered log of what several recorders saw, to check ordering across scopes.
@MainActor final class EventLog {
  private(set) var entries: [String] = []

  func append(_ entry: String) { entries.append(entry) }

  /// Returns the entries logged so far and forgets them.
  func take() -> [String] {
    defer { entries = [] }
    return entries
  }
}

/// A lifecycle subscriber that records every call; `take()` returns and clears them, so each assertion
/// covers exactly the calls since the previous one.
@MainActor final class RecordingSubscriber: LifecycleSubscriber {
  enum Event: Equatable { case didLoad, didBecomeActive, didBecomeInactive }

  let name: String
  let log: EventLog?
  private(set) var events: [Event] = []
  /// Runs after each recorded call, for reentrancy tests.
  var onEvent: ((Event, ScopeLifecycle) -> Void)?

  init(_ name: String = "subscriber", log: EventLog? = nil) {
    self.name = name
    self.log = log
  }

  func take() -> [Event] {
    defer { events = [] }
    return events
  }

  func didLoad(_ lifecycle: ScopeLifecycle) { record(.didLoad, lifecycle) }
  func didBecomeActive(_ lifecycle: ScopeLifecycle) { record(.didBecomeActive, lifecycle) }
  func didBecomeInactive(_ lifecycle: ScopeLifecycle) { record(.didBecomeInactive, lifecycle) }

  private func record(_ event: Event, _ lifecycle: ScopeLifecycle) {
    events.append(event)
    log?.append("\(name).\(event)")
    onEvent?(event, lifecycle)
  }
}

/// A subscriber that implements nothing: the default implementations must be enough.
@MainActor final class SilentSubscriber: LifecycleSubscriber {}

/// Records the states an `observeState` callback receives.
@MainActor final class StateRecorder {
  let name: String
  let log: EventLog?
  private(set) var states: [LifecycleState] = []
  var token: (any Cancellable)?

  init(_ name: String = "observer", log: EventLog? = nil) {
    self.name = name
    self.log = log
  }

  /// Starts observing `scope` without retaining it.
  func observe(_ scope: ScopeLifecycle) {
    token = scope.observeState { [weak self] state in
      guard let self else { return }
      self.states.append(state)
      self.log?.append("\(self.name).\(state)")
    }
  }

  func take() -> [LifecycleState] {
    defer { states = [] }
    return states
  }
}

/// The smallest lifecycle owner.
@MainActor final class TestOwner: LifecycleOwner, LifecycleOwnerRouting {
  let scopeLifecycle = ScopeLifecycle()
  let name: String

  init(_ name: String = "owner") { self.name = name }
}

/// A view lifecycle subscriber that records every call.
@MainActor final class RecordingViewSubscriber: ViewLifecycleSubscriber {
  enum Event: Equatable { case viewDidLoad, viewDidAppear, viewDidDisappear }

  private(set) var events: [Event] = []
  var onEvent: ((Event) -> Void)?

  func take() -> [Event] {
    defer { events = [] }
    return events
  }

  func viewDidLoad() { record(.viewDidLoad) }
  func viewDidAppear() { record(.viewDidAppear) }
  func viewDidDisappear() { record(.viewDidDisappear) }

  private func record(_ event: Event) {
    events.append(event)
    onEvent?(event)
  }
}

/// A view subscriber that implements nothing.
@MainActor final class SilentViewSubscriber: ViewLifecycleSubscriber {}

/// A flag one thread sets and another reads.
final class ThreadFlag: Sendable {
  private let value = Atomic<Bool>(false)

  var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
  func set() { value.store(true, ordering: .sequentiallyConsistent) }
}
