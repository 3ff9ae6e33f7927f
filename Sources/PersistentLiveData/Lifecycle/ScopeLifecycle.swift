// STUB — replaced by the full implementation (children, subscribers, deinit).
@MainActor public final class ScopeLifecycle {
  public private(set) var state: LifecycleState = .initialized
  private var stateObservers: [(id: Int, onChange: @MainActor (LifecycleState) -> Void)] = []
  private var nextID = 0

  public init() {}

  public var isActive: Bool { state == .active }

  public func activate() { move(to: .active) }
  public func deactivate() { if state == .active { move(to: .inactive) } }

  @discardableResult
  public func observeState(_ onChange: @escaping @MainActor (LifecycleState) -> Void) -> any Cancellable {
    nextID += 1
    stateObservers.append((nextID, onChange))
    onChange(state)
    return StubToken()
  }

  private func move(to newState: LifecycleState) {
    guard newState != state else { return }
    state = newState
    for observer in stateObservers { observer.onChange(newState) }
  }

  isolated deinit {
    for observer in stateObservers { observer.onChange(.deinitialized) }
  }
}

private struct StubToken: Cancellable { func cancel() {} }
