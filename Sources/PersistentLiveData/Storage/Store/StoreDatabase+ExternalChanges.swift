internal import Foundation
internal import Logging

extension StoreDatabase {
  /// If another connection committed since the last check, reloads the latest row of every live key and
  /// moves the live values forward (never backwards), notifying their observers on the main actor.
  ///
  /// `PRAGMA data_version` costs a few microseconds and changes only when another connection commits.
  /// Rows are read under the lock; decoding (user code) and notifying happen after it is released. A live
  /// value only ever moves to a newer version, so a write of this process committed meanwhile is never
  /// undone.
  func applyExternalChanges() {
    let changed: [(any StoredLiveValue, StoredRow)] =
      writer.syncIfOpen { connection, state in
        guard state.transaction == nil,
          let dataVersion = try? connection.dataVersion(), dataVersion != state.lastDataVersion
        else { return [] }
        state.lastDataVersion = dataVersion
        state.changeCount &+= 1
        changeSignal.signal()
        state.preloaded.removeAll()
        return instances.liveInstances.compactMap { instance in
          (try? Self.latestRow(key: instance.key, connection: connection)).flatMap { row in
            row.map { (instance, $0) }
          }
        }
      } ?? []
    guard !changed.isEmpty else { return }
    options.logger?.debug(
      "Another connection committed; reloaded live keys",
      metadata: ["path": "\(displayPath)", "keys": "\(changed.count)"])
    var effect = CommitEffect.none
    for (instance, row) in changed {
      effect.merge(instance.receive(row, onMainActor: false))
    }
    effect.notifyObservers()
  }
}

/// A repeating timer on a queue of its own, for a store's background work; cancelled on close.
final class BackgroundTimer: Sendable {
  /// The dispatch source, until cancelled.
  private let timer: Locked<(any DispatchSourceTimer)?>
  private let interval: Int

  init(every interval: Duration) {
    timer = Locked(DispatchSource.makeTimerSource(queue: DispatchQueue(label: "PersistentLiveData.poll")))
    self.interval = max(
      1_000_000,
      Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000))
  }

  /// Starts calling `work` every interval.
  func start(_ work: @escaping @Sendable () -> Void) {
    timer.withLock { timer in
      timer?.schedule(
        deadline: .now() + .nanoseconds(interval), repeating: .nanoseconds(interval),
        leeway: .nanoseconds(interval / 10))
      timer?.setEventHandler(handler: work)
      timer?.resume()
    }
  }

  /// Stops the timer; idempotent.
  func cancel() {
    timer.withLock { timer in
      timer?.cancel()
      timer = nil
    }
  }
}
