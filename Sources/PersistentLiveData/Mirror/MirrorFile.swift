internal import Foundation
package import Logging

/// The seam through which another store keeps a local copy of its versions in a store file of this
/// library: the PostgreSQL store's local cache uses the SQLite store through this type and nothing else.
///
/// A mirror file is an ordinary store file (so `pld-tool keys`, `get` and `history` read it), marked with
/// its own application identifier, kept at ``Durability/normal`` (a power cut costs it its last versions,
/// never its integrity), with a short history, and not watched for other processes' writes: nobody else
/// writes it. Each version keeps the number, time, value schema version and attribution it was given
/// elsewhere; only newer ones are written.
///
/// ```swift
/// let mirror = try MirrorFile(path: "/var/lib/app/flags.cache", applicationIdentifier: "pld-postgres-cache")
/// _ = try mirror.store(rowFromTheServer)
/// let cached = try mirror.latestRow(key: "feature-flags")
/// ```
package final class MirrorFile: Sendable {
  private let store: PersistentStore

  /// Opens (or creates) the mirror file at `path`.
  ///
  /// - Parameters:
  ///   - path: The file.
  ///   - applicationIdentifier: What the file is kept for: a file of another application is refused.
  ///   - versionsKept: How many versions of each key the file keeps.
  ///   - lockWaitMilliseconds: How long a call waits for a file another connection holds locked before
  ///     it throws (see ``isLock(_:)``).
  ///   - logger: Where the store logs.
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` when the file cannot be opened or is
  ///   not a mirror file.
  package init(
    path: String, applicationIdentifier: String, versionsKept: Int = 8, lockWaitMilliseconds: Int = 20,
    logger: Logger? = nil
  ) throws {
    var options = StoreOptions(durability: .normal, retention: .last(versionsKept))
    options.applicationIdentifier = applicationIdentifier
    options.watchesStoreFiles = false
    options.externalChangePollInterval = nil
    options.busyTimeoutMilliseconds = lockWaitMilliseconds
    options.logger = logger
    store = try PersistentStore(path: path, options: options)
  }

  /// The newest version of `key` the file holds; nil when it holds none.
  package func latestRow(key: String) throws -> StoredRow? {
    try store.rows(key: key, limit: 1).first
  }

  /// The versions of `key` the file holds, newest first.
  package func rows(key: String) throws -> [StoredRow] {
    try store.rows(key: key)
  }

  /// Keeps `row` as it is when it is newer than the newest version of its key in the file; returns false,
  /// with nothing written, when it is not.
  package func store(_ row: StoredRow) throws -> Bool {
    try store.storeVerbatim(row)
  }

  /// Forgets `key` and its versions (the removal is not attributed to anyone).
  package func forget(key: String) throws {
    try WriteAttribution.$current.withValue(nil) { try store.removeKey(key) }
  }

  /// Closes the file.
  package func close() throws {
    try store.close()
  }

  /// Whether `error` says the file is locked by another connection (of this process or another): a
  /// state that passes, so the call can be tried again later.
  package static func isLock(_ error: any Error) -> Bool {
    switch error {
    case PersistentLiveDataError.busy, PersistentLiveDataError.alreadyOpen: true
    // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with any extended code.
    case PersistentLiveDataError.sqlite(_, let code, _): [5, 6].contains(code & 0xFF)
    default: false
    }
  }
}
