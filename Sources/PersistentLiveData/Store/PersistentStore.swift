import Logging

/// An SQLite file of versioned values, and the factory of their ``PersistentLiveData``.
///
/// A store keeps one writer connection to its file. Values are stored as JSON, one row per (key,
/// version), in a documented schema any SQLite client can read. Opening validates the file first: a
/// file that is not a PersistentLiveData store is refused with a distinct error and left untouched.
///
/// ```swift
/// let store = try PersistentStore(path: "\(dataFolder)/state.db")
/// let counter = try store.liveData("launches", default: 0)
/// try counter.update { $0 += 1 }
/// print("launched \(counter.value) times")
/// ```
///
/// Within one process, a file can be open in one writable store at a time; a second writable
/// `PersistentStore` on the same file throws
/// ``/PersistentLiveDataBackend/PersistentLiveDataError/alreadyOpen(path:)`` until the first is closed or
/// released (a ``StoreOptions/readOnly`` store may sit beside it). Other processes may open the same file at
/// the same time.
public final class PersistentStore: Sendable {
  let database: StoreDatabase

  /// Opens the store at `path`, creating the file (mode 0600) and missing folders (mode 0700).
  ///
  /// ```swift
  /// let store = try PersistentStore(path: "/var/lib/myapp/state.db",
  ///                                 options: StoreOptions(durability: .normal))
  /// ```
  /// - Parameters:
  ///   - path: The database file. Symbolic links are refused.
  ///   - options: Durability, retention and decode-failure policy.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError``: `notADatabase`, `foreignDatabase`,
  ///   `corrupt`, `schemaTooNew`, `alreadyOpen`, `symbolicLink`, `cannotOpen`, `readOnly`…
  public init(path: String, options: StoreOptions = StoreOptions()) throws {
    database = try StoreDatabase(path: path, options: options)
  }

  /// The store of an open database (a collection hands out its members' live values through it).
  init(opened database: StoreDatabase) {
    self.database = database
  }

  private init(inMemoryWith options: StoreOptions) throws {
    database = try StoreDatabase(path: nil, options: options)
  }

  /// A store in memory: for tests and state that should not outlive the process.
  ///
  /// It behaves like a file store (versions, history, transactions) but nothing reaches a disk.
  ///
  /// ```swift
  /// let store = try PersistentStore.inMemory()
  /// let draft = try store.liveData("draft", default: "")
  /// ```
  /// - Parameter options: Retention and decode-failure policy (durability does not apply).
  /// - Returns: A new, empty store, independent of every other in-memory store.
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` if SQLite cannot create the database
  ///   (out of memory).
  public static func inMemory(options: StoreOptions = StoreOptions()) throws -> PersistentStore {
    try PersistentStore(inMemoryWith: options)
  }

  /// The database file, or nil for an in-memory store.
  ///
  /// ```swift
  /// print("state is kept in \(store.path ?? "memory")")
  /// ```
  public var path: String? { database.path }

  /// The options the store was opened with.
  ///
  /// ```swift
  /// store.options.durability   // .full
  /// ```
  public var options: StoreOptions { database.options }

  /// The live value stored under `key`, restored to its latest version.
  ///
  /// Asking again for the same key with the same `Value` type returns the same object as long as it is
  /// alive. Version 0 means only the default exists; the first `set` writes version 1.
  ///
  /// Keys are compared by their UTF-8 bytes, as SQLite, pld-tool and other processes compare them, never
  /// by Swift's `String ==`: `"café"` spelled with U+00E9 and with `e` + U+0301 are two keys, each with
  /// its own live value and versions. Normalize keys yourself if your app may spell one key two ways.
  ///
  /// ```swift
  /// let theme = try store.liveData("theme", default: "light")
  /// try store.liveData("theme", default: "light") === theme   // true
  /// try store.liveData("theme", default: 0)                   // throws typeMismatch
  /// ```
  /// - Parameters:
  ///   - key: Any non-empty string up to 1 MiB of UTF-8, NUL bytes included, identified by its bytes.
  ///   - defaultValue: The value while nothing has been written.
  /// - Returns: The live value of `key`, at the latest stored version or at version 0 with `defaultValue`.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/typeMismatch(key:existing:requested:)``,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``
  ///   (with the default ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError``),
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/invalidKey(key:reason:)``,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error.
  public func liveData<Value: Codable & Sendable>(
    _ key: String, default defaultValue: Value
  ) throws -> PersistentLiveData<Value> {
    try StoreKey.validate(key)
    let registry = database.instances
    if let existing = try registry.instance(
      of: PersistentLiveData<Value>.self, for: key, valueType: Value.self)
    {
      try database.ensureOpen()
      return existing
    }
    // Decoding runs user code: outside the store's lock. If another thread registers an instance
    // meanwhile, its instance wins and this one is dropped.
    let (latest, changeCount) = try database.latestRowForNewInstance(key: key)
    let decoding = StoredValueDecoding<Value>(
      key: key, policy: options.onUndecodable, logger: options.logger, events: database.events,
      instrumentation: database.instrumentation)
    var latestRow: StoredRow?
    if case .row(let row) = latest { latestRow = row }
    var (value, version) = try decoding.restore(latest: latestRow, default: defaultValue) {
      try database.history(key: key, limit: nil)
    }
    // A removed key: its default, at the version the removal took.
    if case .removed(let removal) = latest { (value, version) = (defaultValue, removal) }
    let created = PersistentLiveData(
      value: value, version: version, defaultValue: defaultValue, database: database, decoding: decoding)
    let (live, newer) = try database.register(created, valueType: Value.self, readAt: changeCount)
    // A version committed between the read and the registration (by `pld-tool set` in this process, or
    // by another connection) found no instance to move: catch up now.
    newer.apply(to: live, onMainActor: false).notifyObservers()
    return live
  }

  /// Every key with at least one stored version, in byte order.
  ///
  /// ```swift
  /// for key in try store.keys() { print(key) }
  /// ```
  /// - Returns: The keys, sorted by their UTF-8 bytes; empty for a new store.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error.
  public func keys() throws -> [String] {
    try database.keys()
  }

  /// Runs `body` in one write transaction: the `set`s and `update`s inside commit together or not at
  /// all.
  ///
  /// Observers and ``/PersistentLiveDataCore/LiveData/value`` see the writes only after the commit. If `body`
  /// throws, nothing is written and the error is rethrown. Other threads' writes wait until the transaction
  /// ends; nested calls are savepoints.
  ///
  /// ```swift
  /// try store.transaction {
  ///   try from.update { $0 -= 10 }
  ///   try to.update { $0 += 10 }
  /// }
  /// ```
  /// - Parameters:
  ///   - isolation: The caller's isolation, filled in by the compiler.
  ///   - body: The writes to make together.
  /// - Throws: What `body` throws, or a ``/PersistentLiveDataBackend/PersistentLiveDataError``.
  public func transaction(
    isolation: isolated (any Actor)? = #isolation, _ body: () throws -> Void
  ) throws {
    try database.instrumentation.measure(.transaction, key: nil) { try database.transaction(body) }
  }

  /// Makes every commit so far durable, also under ``Durability/normal``.
  ///
  /// Writes are committed by the time `set` returns; with ``Durability/normal`` the last commits may
  /// still be lost on power loss until a checkpoint syncs them. `flush()` runs that checkpoint now.
  ///
  /// ```swift
  /// try store.flush()   // before a planned shutdown
  /// ```
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)``,
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/notInTransaction(operation:)``
  ///   from the body of a transaction or `write` of this store, or a storage error.
  public func flush() throws {
    try database.flush()
  }

  /// Deletes every version of `key`; version numbers are never reused.
  ///
  /// Afterwards the key is gone from ``keys()`` and its history is empty. The removal itself takes the next
  /// version number — one above the last removed — and the key's live value (in this process at once, in
  /// other processes when they notice the commit) moves to its default at that version and notifies its
  /// observers. The next write of the key, by any process and after a restart, continues above it. A
  /// `changes(since:)` sequence behind the removal ends with
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/changesPruned(key:since:oldestKept:)`` when the key
  /// is written again. Observers hear of the removal on the main actor, scheduled like another process's
  /// write. Removing a key that has no stored version changes nothing. To keep the history and go back to the
  /// default, use ``PersistentLiveData/reset(isolation:)``.
  ///
  /// ```swift
  /// let session = try store.liveData("session", default: Session.signedOut)
  /// try session.set(Session(user: "ada"))   // version 1
  /// try store.removeKey("session")          // session.value == .signedOut, session.version == 2
  /// try session.set(Session(user: "bob"))   // version 3
  /// ```
  /// - Parameter key: The key to remove.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/notInTransaction(operation:)`` inside
  ///   ``transaction(isolation:_:)``,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/invalidKey(key:reason:)``,
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)`` or a storage error
  ///   (read-only, disk full, busy); nothing has changed then.
  public func removeKey(_ key: String) throws {
    try StoreKey.validate(key)
    try database.removeKey(key)
  }

  /// Copies the store into a new single-file database at `path`, while it is in use.
  ///
  /// The copy holds every commit made before the call began — also those still in the `-wal` file — with
  /// every key, version and `writtenAt`, and opens as a store like the original. Other threads and processes
  /// keep writing meanwhile (the copy is made from a read transaction of its own connection); their later
  /// commits are not in it. `backup` never overwrites: if anything is at `path` (a file, even an empty one, a
  /// folder, a symbolic link) it throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/fileExists(path:)``. The copy is synced to the disk
  /// before `backup` returns; a failed backup leaves no file behind.
  ///
  /// Copying `state.db` with `cp` while a store has it open (or after a process exited without
  /// ``close()``) can miss the commits still in `state.db-wal`: use `backup(to:)` or
  /// `pld-tool backup`.
  ///
  /// ```swift
  /// let store = try PersistentStore(path: "/var/lib/flags/state.db")
  /// try store.backup(to: "/var/backups/flags-2026-11-25.db")
  /// let copy = try PersistentStore(path: "/var/backups/flags-2026-11-25.db")   // every key and version
  /// ```
  /// - Parameter path: Where to create the copy; its folder must exist.
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/fileExists(path:)``, `diskFull`,
  ///   `readOnly` or `cannotOpen` (for `path`),
  ///   ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)``, or a storage error of the
  ///   store.
  public func backup(to path: String) throws {
    try database.backup(to: path)
  }

  /// Closes the file. Afterwards `set`, `update`, `liveData` and the other store calls throw
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)``; live data keep their last
  /// value. Idempotent.
  ///
  /// Closing also stops looking for other processes' commits (the folder's watch, the polling) and lets
  /// another `PersistentStore` of this process open the file. Releasing the store and every live value it
  /// made has the same effect (each ``PersistentLiveData`` keeps its store's file open).
  ///
  /// ```swift
  /// try store.close()
  /// ```
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/notInTransaction(operation:)`` from the
  ///   body of a ``transaction(isolation:_:)`` or ``write(_:)`` of this store (nothing is closed; close after
  ///   it). Otherwise closing always succeeds; called from another thread while such a body runs, it waits
  ///   for its commit.
  public func close() throws {
    try database.refuseInsideTransaction("close")
    database.close()
  }
}
