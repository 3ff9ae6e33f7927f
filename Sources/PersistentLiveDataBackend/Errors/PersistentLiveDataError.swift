/// Everything that can go wrong with a store, each case naming the key, version, path or SQLite code
/// involved.
///
/// Descriptions are one sentence and never include stored values. Keys are shown escaped.
///
/// ```swift
/// do {
///   try settings.set(newSettings)
/// } catch PersistentLiveDataError.diskFull(let path) {
///   showAlert("No space left for \(path)")
/// } catch {
///   showAlert("\(error)")
/// }
/// ```
///
/// The cases come in two groups, by the layer that throws them. Both live in this one enum, which the
/// backend seam declares, so that `catch PersistentLiveDataError.corrupt(…)` keeps working wherever a
/// store is used: Swift declares an enum's cases in the enum's own module, never in a module above it.
///
/// ## Topics
///
/// ### Any backend: values, keys and versions
///
/// Thrown by the SQLite store and the PostgreSQL store alike (the seam's decoding, key and version rules).
///
/// - ``undecodable(key:version:reason:)``
/// - ``valueSchemaTooNew(key:version:stored:supported:)``
/// - ``encodingFailed(key:reason:)``
/// - ``valueTooDeep(key:depth:)``
/// - ``typeMismatch(key:existing:requested:)``
/// - ``invalidKey(key:reason:)``
/// - ``unknownVersion(key:version:)``
/// - ``changesPruned(key:since:oldestKept:)``
///
/// ### A store file: the SQLite store, and a shared store's local cache
///
/// Thrown by the SQLite store about its file, its connection and its transactions.
///
/// - ``diskFull(path:)``
/// - ``readOnly(path:)``
/// - ``busy(path:)``
/// - ``corrupt(path:detail:)``
/// - ``notADatabase(path:)``
/// - ``foreignDatabase(path:)``
/// - ``isADirectory(path:)``
/// - ``symbolicLink(path:)``
/// - ``fileExists(path:)``
/// - ``applicationMismatch(path:expected:found:)``
/// - ``schemaTooNew(path:found:supported:)``
/// - ``schemaTooOld(path:found:required:)``
/// - ``readOnlyMigration(path:migration:)``
/// - ``migrationFailed(path:version:name:reason:)``
/// - ``storeClosed(path:)``
/// - ``alreadyOpen(path:)``
/// - ``cannotOpen(path:code:reason:)``
/// - ``ioError(path:code:reason:)``
/// - ``sqlite(path:code:message:)``
/// - ``versionsExhausted(key:path:)``
/// - ``notInTransaction(operation:)``
public enum PersistentLiveDataError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The stored value of `key` at `version` does not decode as the requested type.
  ///
  /// `reason` names the decoding failure (never the stored contents) and the schema version the value
  /// was stored with. After a change of the type, conform it to ``PersistentValue``, bump its
  /// ``PersistentValue/schemaVersion`` and decode the old shape in
  /// ``PersistentValue/init(from:storedSchemaVersion:)``; or choose a ``DecodeFailurePolicy``.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.undecodable(let key, let version, let reason) { … }
  /// ```
  case undecodable(key: String, version: Int64, reason: String)
  /// Version `version` of `key` was written by a newer build of its type, with schema version `stored`,
  /// and the running type knows only up to `supported` (its ``PersistentValue/schemaVersion``).
  ///
  /// The row is left as it is; the store's ``DecodeFailurePolicy`` decides what a new live value starts
  /// from. Update the app, or keep reading the older versions with a policy.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.valueSchemaTooNew(let key, let version, let stored, let supported) {
  ///   askToUpdate("\(key) v\(version) has schema \(stored); this build reads up to \(supported)")
  /// }
  /// ```
  case valueSchemaTooNew(key: String, version: Int64, stored: Int, supported: Int)
  /// The value for `key` could not be encoded as JSON.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.encodingFailed(let key, _) { … }   // e.g. Double.nan
  /// ```
  case encodingFailed(key: String, reason: String)
  /// The value for `key` nests arrays and objects deeper than a stored value may: 512 levels, the most
  /// Foundation's `JSONDecoder` reads back (`[[1]]` is 2 levels deep, a number 0). Nothing was written.
  ///
  /// `depth` is the level of an array or object past the limit: for a value encoded by the store, the
  /// first one, 513 — the encoder stops there rather than recursing further, however deep the value. A
  /// shared store, `pld-tool set` and `pld-tool import` apply the same limit. Store such a structure
  /// flatter: its nodes in an array, each naming its parent.
  ///
  /// ```swift
  /// indirect enum Chain: Codable, Sendable { case end, link(Chain) }   // {"link":{"_0":{"link":…}}}
  ///
  /// var chain = Chain.end
  /// for _ in 0..<600 { chain = .link(chain) }   // 1,200 levels
  /// do {
  ///   try store.liveData("chain", default: Chain.end).set(chain)
  /// } catch PersistentLiveDataError.valueTooDeep(let key, let depth) {
  ///   print("\(key): an array or object at level \(depth); nothing was written")
  /// }
  /// ```
  case valueTooDeep(key: String, depth: Int)
  /// `key` is already in use in this store with another value type.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.typeMismatch(let key, let existing, let requested) { … }
  /// ```
  case typeMismatch(key: String, existing: String, requested: String)
  /// The key cannot be stored (empty, or longer than 1 MiB of UTF-8).
  ///
  /// ```swift
  /// try store.liveData("", default: 0)   // throws invalidKey
  /// ```
  case invalidKey(key: String, reason: String)
  /// `version` of `key` was never written or has been pruned.
  ///
  /// ```swift
  /// try settings.rollback(to: 999)   // throws unknownVersion if 999 is not kept
  /// ```
  case unknownVersion(key: String, version: Int64)
  /// The disk or file system holding the store is full (SQLITE_FULL).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.diskFull(let path) { freeSpace(near: path) }
  /// ```
  case diskFull(path: String)
  /// The store's file, its folder or the file system is read-only (SQLITE_READONLY).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.readOnly(let path) { … }   // nothing was written
  /// ```
  case readOnly(path: String)
  /// Another connection held the write lock longer than the busy timeout (SQLITE_BUSY).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.busy { retryLater() }   // StoreOptions.busyTimeoutMilliseconds
  /// ```
  case busy(path: String)
  /// The file is a damaged SQLite database (SQLITE_CORRUPT, a failed integrity check or a truncation).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.corrupt(let path, let detail) { restoreBackup(path, detail) }
  /// ```
  case corrupt(path: String, detail: String)
  /// The file is not an SQLite database at all (SQLITE_NOTADB, or the wrong header).
  ///
  /// ```swift
  /// try PersistentStore(path: "notes.txt")   // throws notADatabase; the file is untouched
  /// ```
  case notADatabase(path: String)
  /// The file is an SQLite database that belongs to another application.
  ///
  /// ```swift
  /// try PersistentStore(path: "other-app.sqlite")   // throws foreignDatabase
  /// ```
  case foreignDatabase(path: String)
  /// The file was written by a newer version of this library, with schema `found`; this one knows up to
  /// `supported`.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.schemaTooNew(_, let found, let supported) { askToUpdate() }
  /// ```
  case schemaTooNew(path: String, found: Int, supported: Int)
  /// A newer version of this library applied `migration` to the file, which it marked read-only for
  /// versions that do not know it (the README's compatibility promise): this one reads the file, and each
  /// write throws this, with nothing written. Upgrade the library to write to it.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.readOnlyMigration(_, let migration) { showReadOnlyBanner(migration) }
  /// ```
  case readOnlyMigration(path: String, migration: String)
  /// The store has been closed.
  ///
  /// ```swift
  /// try store.close()
  /// try settings.set(Settings())   // throws storeClosed
  /// ```
  case storeClosed(path: String?)
  /// This process already has a store open on the file.
  ///
  /// ```swift
  /// let second = try PersistentStore(path: path)   // throws alreadyOpen while the first is open
  /// ```
  case alreadyOpen(path: String)
  /// The path is a symbolic link; stores refuse to follow them.
  ///
  /// ```swift
  /// try PersistentStore(path: "/tmp/link-to-state.db")   // throws symbolicLink
  /// ```
  case symbolicLink(path: String)
  /// The file could not be created or opened (SQLite code, or errno for file-system calls).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.cannotOpen(let path, let code, let reason) { … }
  /// ```
  case cannotOpen(path: String, code: Int32, reason: String)
  /// The operating system reported an I/O error (SQLITE_IOERR and its extended code).
  ///
  /// ```swift
  /// catch PersistentLiveDataError.ioError(let path, let code, _) { … }
  /// ```
  case ioError(path: String, code: Int32, reason: String)
  /// Any other SQLite failure, with its extended result code and message.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.sqlite(_, let code, let message) { log(code, message) }
  /// ```
  case sqlite(path: String?, code: Int32, message: String)
  /// `key` has reached the largest version number (`Int64.max`): no other version can be written. Only
  /// another program writing the file directly can get there.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.versionsExhausted(let key, _) { try store.liveData(key + ".v2", default: 0) }
  /// ```
  case versionsExhausted(key: String, path: String)
  /// `PersistentLiveData/changes(since:)` needed the versions of `key` after `since`, but the oldest
  /// still stored is `oldestKept`: the ones in between were pruned by retention (or removed). Start again
  /// from `PersistentLiveData/history(limit:)` and then `changes(since:)` its newest version.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.changesPruned(_, _, let oldestKept) { resync(from: oldestKept) }
  /// ```
  case changesPruned(key: String, since: Int64, oldestKept: Int64)
  /// The path names a directory where the store's database file should be. Nothing was created or
  /// changed; pass the path of a file (inside that directory, for example), or move the directory away.
  ///
  /// ```swift
  /// try PersistentStore(path: "/var/lib/app")   // throws isADirectory
  /// try PersistentStore(path: "/var/lib/app/state.db")   // a file in it: fine
  /// ```
  case isADirectory(path: String)
  /// Migration `version` (named `name`) could not bring the file to the library's schema: `reason` is
  /// the cause (SQLite's message, or what the migrator refused). The failed migration was rolled back;
  /// the ones before it stay applied, and the file is still readable by the version of the library that
  /// wrote it.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.migrationFailed(let path, let version, let name, let reason) {
  ///   log("\(path): migration \(version) \(name) failed: \(reason)")
  /// }
  /// ```
  case migrationFailed(path: String, version: Int, name: String, reason: String)
  /// Something is already at `path`, where `PersistentStore/backup(to:)` was to create its copy (a
  /// file, even an empty one, a folder or a symbolic link): a backup never overwrites anything. Nothing
  /// was written.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.fileExists(let path) {
  ///   log("\(path) exists; choose a new name for the backup")
  /// }
  /// ```
  case fileExists(path: String)
  /// `operation` cannot run inside `PersistentStore/transaction(isolation:_:)`: call it before or
  /// after the transaction. Nothing was changed.
  ///
  /// ```swift
  /// try store.transaction {
  ///   try store.removeKey("draft")   // throws notInTransaction(operation: "removeKey")
  /// }
  /// ```
  case notInTransaction(operation: String)
  /// The file has schema version `found`, older than the `required` one this library reads, and the
  /// store was opened with `StoreOptions/readOnly`, which never migrates. Open it once without
  /// `readOnly` (any writable open upgrades it in place), then read it.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.schemaTooOld(let path, let found, let required) {
  ///   log("\(path) is at schema \(found); open it writable once to upgrade it to \(required)")
  /// }
  /// ```
  case schemaTooOld(path: String, found: Int, required: Int)
  /// The file was created for another application: its recorded application identifier is `found`,
  /// and this store was opened with `StoreOptions/applicationIdentifier` `expected`. Nothing was
  /// written; check the path.
  ///
  /// ```swift
  /// catch PersistentLiveDataError.applicationMismatch(let path, let expected, let found) {
  ///   log("\(path) belongs to \(found), not \(expected)")
  /// }
  /// ```
  case applicationMismatch(path: String, expected: String, found: String)
}
