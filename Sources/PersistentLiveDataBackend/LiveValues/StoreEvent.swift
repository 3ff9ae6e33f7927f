/// Something a store noticed that the app may want to act on, without a logger: delivered by
/// `PersistentStore/events()` (and the shared store's `events()`), and logged as before.
///
/// ```swift
/// Task {
///   for await event in store.events() {
///     if case .undecodableVersion(let key, let version, let error) = event {
///       alert("\(key) v\(version) was written in a shape this build cannot read: \(error)")
///     }
///   }
/// }
/// ```
public enum StoreEvent: Sendable, Equatable {
  /// A version written elsewhere — another process, `pld-tool`, another replica — does not decode as
  /// the live value's type (`error` is ``PersistentLiveDataError/undecodable(key:version:reason:)`` or
  /// ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``). The live value keeps
  /// its last version; the stored row is left untouched.
  ///
  /// ```swift
  /// case .undecodableVersion(let key, let version, _): report(key, version)
  /// ```
  case undecodableVersion(key: String, version: Int64, error: PersistentLiveDataError)
  /// A live value started without its newest stored version, which does not decode: under
  /// ``DecodeFailurePolicy/useDefault`` from its default (`startedFrom` nil), under
  /// ``DecodeFailurePolicy/lastDecodable`` from the newest older version that decodes (`startedFrom`),
  /// or the default if none does. The live value's version is still `version`.
  ///
  /// ```swift
  /// case .restoredPastUndecodable(let key, let version, let startedFrom, _):
  ///   report("\(key): v\(version) unreadable, started from \(startedFrom.map { "v\($0)" } ?? "the default")")
  /// ```
  case restoredPastUndecodable(
    key: String, version: Int64, startedFrom: Int64?, error: PersistentLiveDataError)
  /// `PersistentLiveData/history(limit:)` (or a shared store's `history`) left out version `version`
  /// of `key`, which does not decode (`error` names key, version and cause), under
  /// ``DecodeFailurePolicy/useDefault`` or ``DecodeFailurePolicy/lastDecodable``. Under
  /// ``DecodeFailurePolicy/throwError`` the history throws that error instead; either way no version is
  /// left out without a word. The row stays as it is; `PersistentLiveData/historyEntries(limit:)` lists
  /// it with its error.
  ///
  /// ```swift
  /// case .versionLeftOutOfHistory(let key, let version, let error):
  ///   report("\(key) v\(version) is missing from the history: \(error)")
  /// ```
  case versionLeftOutOfHistory(key: String, version: Int64, error: PersistentLiveDataError)
  /// A read or write of the store's file at `path` met a damaged page (SQLite's `SQLITE_CORRUPT`, found by
  /// its checks of every page it reads): the operation threw `error`,
  /// ``PersistentLiveDataError/corrupt(path:detail:)`` naming the key and version it was reading where
  /// known (`key`, `version`, nil otherwise) and the SQLite code. Nothing is written over the damage and
  /// nothing is reset; what lies on other pages stays readable. Check the whole file with
  /// `PersistentStore/verifyIntegrity()` or `pld-tool verify`, and restore a backup.
  ///
  /// ```swift
  /// case .damagedPage(let path, let key, _, let error):
  ///   alert("\(path) is damaged\(key.map { " (key \($0))" } ?? ""): \(error)")
  /// ```
  case damagedPage(path: String, key: String?, version: Int64?, error: PersistentLiveDataError)
  /// A shared store's server stopped answering: a call, its listener or a catch-up could not reach it.
  /// Writes throw until ``serverReachable`` comes; live values keep their last versions (from the local
  /// cache too, if the store has one).
  ///
  /// ```swift
  /// case .serverUnreachable(let reason): status.degraded(reason)
  /// ```
  case serverUnreachable(reason: String)
  /// A shared store reached its server again after ``serverUnreachable(reason:)``; the listener catches
  /// every live value up.
  ///
  /// ```swift
  /// case .serverReachable: status.healthy()
  /// ```
  case serverReachable
  /// A shared store's local cache file could not be used — damaged, foreign, of a newer schema, locked
  /// by another process or not writable — and was set aside: left as it is, not read nor written again
  /// by this store, which works without a cache from then on.
  ///
  /// ```swift
  /// case .localCacheSetAside(let path, let reason): alert("cache \(path) unusable: \(reason)")
  /// ```
  case localCacheSetAside(path: String, reason: String)
}

/// Hands each ``StoreEvent`` to every stream subscribed when it happens.
///
/// Each stream buffers the newest ``bufferSize`` events its reader has not taken yet. Closing the store
/// finishes every stream; a stream asked for after that finishes at once.
///
/// ```swift
/// let hub = StoreEventHub()
/// let stream = hub.stream()
/// hub.emit(.undecodableVersion(key: "k", version: 2, error: error))
/// ```
package final class StoreEventHub: Sendable {
  /// Events kept per stream for a reader that falls behind (older ones are dropped).
  static let bufferSize = 256

  private struct State {
    var nextID = 0
    var subscribers: [Int: AsyncStream<StoreEvent>.Continuation] = [:]
    var isFinished = false
  }

  private let state = Locked(State())

  package init() {}

  /// A new stream of the events from now on.
  package func stream() -> AsyncStream<StoreEvent> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: StoreEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
    let id = state.withLock { state -> Int? in
      guard !state.isFinished else { return nil }
      state.nextID += 1
      state.subscribers[state.nextID] = continuation
      return state.nextID
    }
    guard let id else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Delivers `event` to every current stream.
  package func emit(_ event: StoreEvent) {
    for continuation in state.withLock({ Array($0.subscribers.values) }) {
      continuation.yield(event)
    }
  }

  /// Finishes every stream (the store closed). Idempotent.
  package func finish() {
    let continuations = state.withLock { state -> [AsyncStream<StoreEvent>.Continuation] in
      state.isFinished = true
      defer { state.subscribers = [:] }
      return Array(state.subscribers.values)
    }
    for continuation in continuations { continuation.finish() }
  }
}
