import PersistentLiveDataBackend

/// The keys notifications said a live value or collection is behind on, read one task per key: a burst
/// of notifications of a key becomes one read (and one more if another came during it), and a slow read
/// holds up no other key.
final class NotifiedReads: Sendable {
  private struct State {
    var waiting: Set<StoreKey> = []
    var reading: Set<StoreKey> = []
    var failure: (any Error)?
  }

  private let state = Locked(State())
  private let signal = ChangeSignal()

  func request(_ key: String) {
    state.withLock { _ = $0.waiting.insert(StoreKey(key)) }
    signal.signal()
  }

  /// Reads every requested value with `read` until the calling task is cancelled, or throws the first
  /// read's failure (the others are cancelled): the reads share one connection, and a failed read means
  /// that connection is gone or stuck.
  func perform(_ read: @escaping @Sendable (String) async throws -> Void) async throws {
    try await withThrowingDiscardingTaskGroup { group in
      while true {
        let seen = signal.generation
        let (ready, failure) = state.withLock { state in
          let ready = state.waiting.subtracting(state.reading)
          for key in ready {
            state.waiting.remove(key)
            state.reading.insert(key)
          }
          return (ready, state.failure)
        }
        if let failure { throw failure }
        for key in ready {
          group.addTask {
            do {
              try await read(key.text)
            } catch {
              self.state.withLock { state in state.failure = state.failure ?? error }
            }
            self.state.withLock { _ = $0.reading.remove(key) }
            self.signal.signal()
          }
        }
        guard await signal.wait(after: seen) else { break }
      }
      group.cancelAll()
    }
  }
}
