@testable import PersistentLiveData

extension Locked {
  /// A copy of the current state, for assertions: `#expect(calls.value == 1)`.
  var value: State { withLock { $0 } }
}
