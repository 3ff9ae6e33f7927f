import PersistentLiveDataBackend

/// Where one listening session is: given up by its deadline before the server answered its `LISTEN`, or
/// kept (decided once, by whichever comes first), then listening, then ended.
final class ListenSession: Sendable {
  private struct State {
    var isKept = false
    var isGivenUp = false
    var isListening = false
    var isEnded = false
  }

  private let state = Locked(State())

  /// Called by the session once the server answered its `LISTEN`: false when the deadline gave it up
  /// first.
  func keep() -> Bool {
    state.withLock { state in
      if state.isGivenUp { return false }
      state.isKept = true
      return true
    }
  }

  /// Called by the waiter when the deadline passed: false when the session was kept first.
  func giveUp() -> Bool {
    state.withLock { state in
      if state.isKept { return false }
      state.isGivenUp = true
      return true
    }
  }

  func markListening() { state.withLock { $0.isListening = true } }
  func end() { state.withLock { $0.isEnded = true } }

  var isListening: Bool { state.withLock { $0.isListening } }
  var isKeptOrEnded: Bool { state.withLock { $0.isKept || $0.isEnded } }
  var isListeningOrEnded: Bool { state.withLock { $0.isListening || $0.isEnded } }
}
