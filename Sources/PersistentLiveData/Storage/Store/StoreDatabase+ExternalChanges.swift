internal import Foundation
internal import Logging

extension StoreDatabase {
  /// If another connection committed since the last check, reloads the latest row of every live key (or
  /// the version its removal took) and moves the live values forward (never backwards), notifying their
  /// observers on the main actor.
  ///
  /// `PRAGMA data_version` costs a few microseconds and changes only when another connection commits.
  /// Rows are read under the lock; decoding (user code) and notifying happen after it is released. A live
  /// value only ever moves to a newer version, so a write of this process committed meanwhile is never
  /// undone.
  func applyExternalChanges() {
    let changed: [(any StoredLiveValue, StoredKeyState)] =
      writer.syncIfOpen { connection, state in
        guard state.transaction == nil,
          let dataVersion = try? connection.dataVersion(), dataVersion != state.lastDataVersion
        else { return [] }
        state.lastDataVersion = dataVersion
        state.changeCount &+= 1
        changeSignal.signal()
        return instances.liveInstances.compactMap { instance in
          (try? Self.latestState(key: instance.key, connection: connection)).map { (instance, $0) }
        }
      } ?? []
    guard !changed.isEmpty else { return }
    options.logger?.debug(
      "Another connection committed; reloaded live keys",
      metadata: ["path": "\(displayPath)", "keys": "\(changed.count)"])
    var effect = CommitEffect.none
    for (instance, latest) in changed {
      effect.merge(latest.apply(to: instance, onMainActor: false))
    }
    effect.notifyObservers()
  }
}
