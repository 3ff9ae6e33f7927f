package import Foundation

/// When the recent versions of one live value were committed: the `writtenAt` that
/// ``StoredLiveData/observeVersioned(owner:receiveCurrent:_:)-(AnyObject,_,_)`` and its siblings pass
/// with each value.
///
/// A live value's memory holds a value and its version (``/PersistentLiveDataCore/LiveData`` keeps them under
/// one lock), not the commit time, so a backend records each version's time here **before** it moves memory
/// to that version (``/PersistentLiveDataCore/LiveData/advance(to:version:onMainActor:)``): whoever then
/// reads the version from memory finds its time here. The ledger is keyed by version, so a time can never be
/// paired with another version's value. A version the ledger has not seen — the one an instance was restored
/// at, one that reached memory by a path that does not record — is looked up in the backend's ``Source`` and
/// then remembered.
///
/// Only the newest versions are kept (``keptVersions``): deliveries are always of the newest version in
/// memory. The lock is a leaf: no lookup and no user code runs while it is held.
///
/// ```swift
/// let times = CommitTimes(source: .immediate { version in try? database.row(key: key, version:
/// version)?.writtenAt }) times.record(committed.version, writtenAt: committed.writtenAt)   // then
/// advance(to:version:onMainActor:)
/// ```
package final class CommitTimes: Sendable {
  /// What is recorded of a commit: its time, and who made it and why (``WriteAttribution``).
  package typealias Commit = (writtenAt: Date, attribution: WriteAttribution?)

  /// Where the commit time of a version the ledger has not kept is found.
  package enum Source: Sendable {
    /// Read at once, on the calling thread (a local file). Nil: the version has no row (the version a
    /// removal took, or a pruned one).
    case immediate(@Sendable (_ version: Int64) -> Commit?)
    /// Fetched over the network (a server). Throws while the server cannot be reached; nil: no row.
    case fetched(@Sendable (_ version: Int64) async throws -> Commit?)
  }

  private struct State {
    /// Oldest first; at most ``CommitTimes/keptVersions`` entries.
    var recent: [(version: Int64, writtenAt: Date, attribution: WriteAttribution?)] = []
    /// Versions whose time is being fetched.
    var fetching: Set<Int64> = []
  }

  /// How many versions the ledger remembers.
  static var keptVersions: Int { 32 }

  /// The `writtenAt` of version 0, the default no write has replaced yet, and of a version whose commit
  /// time is nowhere to be found: 1970-01-01T00:00:00Z, the zero of the store's `written_at` column.
  static let unwritten = Date(timeIntervalSince1970: 0)

  private let source: Source
  private let state = Locked(State())

  package init(source: Source) {
    self.source = source
  }

  /// Remembers when `version` was committed, at the store's millisecond precision (so that the date equals
  /// the one `PersistentLiveData/history(limit:)` reads back), with its attribution. A version already
  /// known keeps its time.
  package func record(_ version: Int64, writtenAt: Date, attribution: WriteAttribution? = nil) {
    record(
      version, milliseconds: Int64((writtenAt.timeIntervalSince1970 * 1000).rounded()),
      attribution: attribution)
  }

  /// Remembers when `version` was committed, given in milliseconds since 1970 as stores keep it, with its
  /// attribution.
  package func record(_ version: Int64, milliseconds: Int64, attribution: WriteAttribution? = nil) {
    let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    state.withLock { state in
      guard !state.recent.contains(where: { $0.version == version }) else { return }
      let position = state.recent.firstIndex { $0.version > version } ?? state.recent.endIndex
      state.recent.insert((version, date, attribution), at: position)
      if state.recent.count > Self.keptVersions { state.recent.removeFirst() }
    }
  }

  /// The commit time of `version` if it can be had without waiting: version 0 is ``unwritten``; then the
  /// ledger; then an ``Source/immediate(_:)`` source (whose answer is remembered, ``unwritten`` when it
  /// has none). Nil only for a ``Source/fetched(_:)`` source: call ``fetch(_:while:then:)``.
  package func known(_ version: Int64) -> Date? {
    if version == 0 { return Self.unwritten }
    if let kept = state.withLock({ $0.recent.last { $0.version == version }?.writtenAt }) { return kept }
    guard case .immediate(let read) = source else { return nil }
    // Outside the ledger's lock: the read takes the store's.
    let commit = read(version)
    let date = commit?.writtenAt ?? Self.unwritten
    record(version, writtenAt: date, attribution: commit?.attribution)
    return date
  }

  /// The attribution recorded with `version`, once ``known(_:)`` found its time; nil when it has none (or
  /// the ledger no longer keeps it).
  package func attribution(of version: Int64) -> WriteAttribution? {
    state.withLock { $0.recent.last { $0.version == version }?.attribution }
  }

  /// Fetches the commit time of `version` from a ``Source/fetched(_:)`` source, retrying while the server
  /// cannot be reached and `stillNeeded` holds, then calls `then` on the main actor. One fetch per version
  /// at a time; a later call while one runs does nothing.
  ///
  /// - Parameters:
  ///   - version: The version whose commit time no delivery could find.
  ///   - stillNeeded: Whether the time is still wanted (the live value is alive and still at `version`).
  ///   - then: Called on the main actor once the time is recorded, or once it is no longer needed.
  func fetch(
    _ version: Int64, while stillNeeded: @escaping @Sendable () -> Bool,
    then: @escaping @MainActor @Sendable () -> Void
  ) {
    guard case .fetched(let read) = source,
      state.withLock({ $0.fetching.insert(version).inserted })
    else { return }
    Task {
      var delay = Duration.milliseconds(50)
      while stillNeeded() {
        do {
          let commit = try await read(version)
          record(version, writtenAt: commit?.writtenAt ?? Self.unwritten, attribution: commit?.attribution)
          break
        } catch {
          try? await Task.sleep(for: delay)
          delay = min(delay * 2, .seconds(5))
        }
      }
      state.withLock { _ = $0.fetching.remove(version) }
      await then()
    }
  }
}
