internal import Foundation
internal import Logging

extension StoreDatabase {
  /// If another connection committed since the last check, reloads the latest row (or the version its
  /// removal took) of every live key that changed and moves those live values forward (never
  /// backwards), notifying their observers on the main actor.
  ///
  /// `PRAGMA data_version` costs a few microseconds and changes only when another connection commits.
  /// Which keys changed comes from the change log (``ChangeLog``): the rows after the position this
  /// store applied last, so the work under the lock follows what changed, not how many keys are live.
  /// Where the log cannot tell (no log in the file, rows trimmed past the position), every live key is
  /// read, as before the log. Rows are read under the lock; decoding (user code) and notifying happen
  /// after it is released. A live value only ever moves to a newer version, so a write of this process
  /// committed meanwhile is never undone.
  func applyExternalChanges() {
    let (changed, members): ([(any StoredLiveValue, StoredKeyState)], [MemberChange]) =
      writer.syncIfOpen { connection, state in
        guard state.transaction == nil,
          let dataVersion = try? connection.dataVersion(), dataVersion != state.lastDataVersion
        else { return ([], []) }
        state.lastDataVersion = dataVersion
        state.changeCount &+= 1
        changeSignal.signal()
        let keys = changedKeys(connection: connection, state: state)
        let instances =
          keys.map { $0.compactMap { self.instances.instance(for: $0.text) } } ?? self.instances.liveInstances
        let changed = instances.compactMap { instance in
          (try? Self.latestState(key: instance.key, connection: connection)).map { (instance, $0) }
        }
        let members = collections.isEmpty ? [] : memberChanges(of: keys, connection: connection)
        // Keys of live values and members of live collections read: what must follow what changed.
        externalCheckStatistics.withLock { $0.record(keysRead: instances.count + members.count) }
        return (changed, members)
      } ?? ([], [])
    guard !changed.isEmpty || !members.isEmpty else { return }
    options.logger?.debug(
      "Another connection committed; reloaded live keys",
      metadata: ["path": "\(displayPath)", "keys": "\(changed.count)", "members": "\(members.count)"])
    var effect = CommitEffect.none
    for (instance, latest) in changed {
      effect.merge(latest.apply(to: instance, onMainActor: false))
    }
    if !members.isEmpty { effect.merge(collections.apply(members, onMainActor: false)) }
    effect.notifyObservers()
  }

  /// The keys the change log says changed since the last check (nil when it cannot tell), moving the
  /// store's position in the log to its newest row.
  private func changedKeys(connection: SQLiteConnection, state: WriterState) -> Set<StoreKey>? {
    if let position = state.changeLogPosition,
      let changed = try? ChangeLog.changes(after: position, connection: connection)
    {
      state.changeLogPosition = changed.newest
      return changed.keys
    }
    // No log kept for this store, or it cannot tell: every live key, and a registered store starts over
    // at the log's newest row. (Read before the keys: a commit in between is read twice at most, never
    // missed.)
    state.changeLogPosition =
      state.changeLogReader == nil ? nil : try? ChangeLog.newest(connection: connection)
    return nil
  }

  /// The newest state of every changed key that is a member of a live collection; when the log cannot
  /// tell which keys changed (`keys` nil), of every member of every live collection that differs from
  /// memory — read by the collection's key range, the rest of the store untouched.
  private func memberChanges(of keys: Set<StoreKey>?, connection: SQLiteConnection) -> [MemberChange] {
    let live = collections.liveCollections
    guard let keys else {
      return live.flatMap { collection in
        (try? Self.memberDifferences(of: collection, connection: connection)) ?? []
      }
    }
    var changes: [MemberChange] = []
    for key in keys where live.contains(where: { MemberKey.id(of: key.text, prefix: $0.prefix) != nil }) {
      switch try? Self.latestState(key: key.text, connection: connection) {
      case .row(let row): changes.append(.written(row, staged: nil))
      case .removed(let version): changes.append(.removed(key: key.text, version: version, at: Date()))
      case .never, nil: continue
      }
    }
    return changes
  }
}

/// What the checks for other connections' commits read, for tests and diagnostics: the figure that must
/// follow what changed, not what is live.
struct ExternalCheckStatistics: Sendable {
  /// Checks that found another connection's commit.
  package private(set) var checks = 0
  /// Keys read by the last such check.
  private(set) var lastKeysRead = 0
  /// Keys read by all of them.
  private(set) var keysRead = 0

  mutating func record(keysRead count: Int) {
    checks += 1
    lastKeysRead = count
    keysRead += count
  }
}
