import Foundation
import PersistentLiveData
import Synchronization

/// An SQLite store as the inspector sees it: read through a read-only ``StoreInspector`` (the file
/// stays byte-for-byte unchanged), live through inotify on the file's folder (``FolderWatcher``), and
/// written — with `--allow-writes` only — through the library's own write path.
///
/// On every wake-up it compares `PRAGMA data_version` (which changes with every other connection's
/// commit) and, when it moved, asks which keys' latest versions changed (compared inside SQLite:
/// ``StoreInspector/latestVersionChanges()``), then reads the versions committed since: each one is
/// published once, in order per key.
///
/// ```swift
/// let source = try SQLiteInspectorSource(path: "app.db", allowWrites: false)
/// let keys = try await source.summaries()
/// ```
final class SQLiteInspectorSource: InspectorSource {
  private struct State {
    var inspector: StoreInspector
    var dataVersion: Int64 = -1
    var known: [StoreKey: Int64] = [:]
    /// Whether the inspector forgot what it reported: its next answer names every key.
    var resynchronizing = false
  }

  let path: String
  let allowWrites: Bool
  /// Whether new versions can be seen: not for a file opened immutable (its folder is not writable).
  let isLive: Bool
  private let state: Mutex<State>

  /// Opens `path` read-only.
  ///
  /// - Throws: What ``StoreAccess/inspector(_:salvaging:)`` throws for a missing, empty or foreign file.
  var storeName: String { path }

  var limitation: String? {
    isLive
      ? nil
      : "the folder of \(path) is not writable, so the file is opened immutable: the page shows it as it was "
        + "when pld-tool serve started (a -wal file ignored) and does not follow new versions."
  }

  init(path: String, allowWrites: Bool) throws {
    self.path = path
    self.allowWrites = allowWrites
    let inspector = try StoreAccess.inspector(path)
    isLive = inspector.accessMode != .immutable
    state = Mutex(State(inspector: inspector))
  }

  func summaries() async throws -> [KeySummary] {
    try state.withLock { state in
      state.dataVersion = try state.inspector.dataVersion()
      // Every key, the first time: later calls name only the keys that changed.
      var known: [StoreKey: Int64] = [:]
      for (key, latest) in try state.inspector.latestVersionChanges().changed {
        known[StoreKey(key)] = latest
      }
      state.known = known
      let retentions = try state.inspector.recordedRetentions()
      return try state.inspector.keyStatistics().map { statistics in
        try Self.summary(statistics, retention: retentions[statistics.key], inspector: state.inspector)
      }
    }
  }

  func history(key: String, limit: Int) async throws -> (versions: [VersionEntry], before: VersionEntry?) {
    let rows: [StoredRow] = try state.withLock { state in
      do {
        return try state.inspector.rows(key: key, limit: limit + 1)
      } catch let error as InspectionError {
        throw InspectorFailure(status: 404, message: "\(error)")
      }
    }
    guard !rows.isEmpty else { throw InspectorFailure(status: 404, message: "No key \(key) is stored.") }
    let entries = rows.map(VersionEntry.init)
    return (Array(entries.prefix(limit)), entries.count > limit ? entries[limit] : nil)
  }

  func rollback(key: String, to version: Int64, ifVersion expected: Int64?) async throws -> Int64 {
    try state.withLock { state in
      do {
        _ = try state.inspector.row(key: key, version: version)
      } catch let error as InspectionError {
        throw InspectorFailure(status: 404, message: "\(error)")
      }
    }
    let store = try StoreAccess.store(path, ifMissing: .fail)
    defer { try? store.close() }
    return try ServeAttribution.recording {
      try store.rollbackJSON(key: key, to: version, ifVersion: expected)
    }
  }

  func watch(publishingTo feed: VersionFeed) async throws {
    guard isLive else { return }
    let url = URL(fileURLWithPath: path)
    let name = url.lastPathComponent
    let wake = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let watcher: FolderWatcher?
    do {
      watcher = try FolderWatcher(
        folder: url.deletingLastPathComponent().path, names: [name, name + "-wal"]
      ) { wake.continuation.yield() }
    } catch {
      // Where inotify is missing: look at PRAGMA data_version (a few microseconds) every 100 ms.
      watcher = nil
      Task {
        while !Task.isCancelled {
          try? await Task.sleep(for: .milliseconds(100))
          wake.continuation.yield()
        }
      }
    }
    defer { watcher?.stop() }
    // A commit between the summaries and the watch's start is found by this first scan.
    wake.continuation.yield()
    for await _ in wake.stream {
      if Task.isCancelled { break }
      do {
        try scan(publishingTo: feed)
      } catch {
        // A writer recovering or resetting the WAL (busy): look again shortly.
        Task {
          try? await Task.sleep(for: .milliseconds(50))
          wake.continuation.yield()
        }
      }
    }
  }

  func close() async {
    state.withLock { $0.inspector.close() }
  }

  /// Publishes the versions committed since the last scan, when `PRAGMA data_version` moved.
  private func scan(publishingTo feed: VersionFeed) throws {
    let (events, removed): ([VersionEvent], [String]) = try state.withLock { state in
      do {
        return try Self.changes(&state)
      } catch {
        // Told of changes not yet published: the next scan is told of every key, and publishes those
        // whose version differs from the one known.
        try? state.inspector.forgetLatestVersions()
        state.resynchronizing = true
        state.dataVersion = -1
        throw error
      }
    }
    feed.publish(events, removed: removed)
  }

  /// The versions committed since the last look, and the keys removed, when `PRAGMA data_version` moved.
  private static func changes(_ state: inout State) throws -> ([VersionEvent], [String]) {
    let dataVersion = try state.inspector.dataVersion()
    guard dataVersion != state.dataVersion else { return ([], []) }
    let changes = try state.inspector.latestVersionChanges()
    var events: [VersionEvent] = []
    let changed = changes.changed.filter { state.known[StoreKey($0.key)] != $0.latest }
    if !changed.isEmpty {
      let retentions = try state.inspector.recordedRetentions()
      for (key, version) in changed {
        let storeKey = StoreKey(key)
        let rows = try state.inspector.rows(key: key, after: state.known[storeKey] ?? 0)
        let summary = try Self.summary(
          state.inspector.keyStatistics(for: key), retention: retentions[storeKey], inspector: state.inspector
        )
        for row in rows {
          events.append(
            VersionEvent(
              key: row.key, version: row.version, writtenAtMilliseconds: row.writtenAtMilliseconds,
              summary: row.version == version ? summary : nil))
        }
        state.known[storeKey] = version
      }
    }
    var removed = changes.removed
    if state.resynchronizing {
      let stored = Set(changes.changed.map { StoreKey($0.key) })
      removed += state.known.keys.filter { !stored.contains($0) }.map(\.text)
      state.resynchronizing = false
    }
    for key in removed { state.known[StoreKey(key)] = nil }
    state.dataVersion = dataVersion
    return (events, removed)
  }

  private static func summary(
    _ statistics: KeyStatistics, retention: HistoryRetention?, inspector: StoreInspector
  ) throws -> KeySummary {
    let attribution =
      ServeAttribution.isRecorded
      ? ServeAttribution.of(try inspector.latestRow(key: statistics.key)) : nil
    return KeySummary(
      key: statistics.key, version: statistics.currentVersion,
      writtenAtMilliseconds: statistics.lastWrittenAtMilliseconds, schemaVersion: statistics.schemaVersion,
      versions: statistics.versionCount, retention: RetentionText.json(retention), attribution: attribution)
  }
}
