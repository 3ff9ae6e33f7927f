public import Logging

/// How a ``PersistentStore`` writes and reads its file.
///
/// ```swift
/// var options = StoreOptions(durability: .normal, retention: .last(50))
/// options.onUndecodable = .lastDecodable
/// let store = try PersistentStore(path: path, options: options)
/// ```
public struct StoreOptions: Sendable {
  /// How hard each commit works to survive a crash. Default ``Durability/full``.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.durability = .normal   // faster commits; flush() before a planned shutdown
  /// ```
  public var durability: Durability
  /// How many versions of each key are kept. Default ``/PersistentLiveDataBackend/HistoryRetention/all``.
  ///
  /// Retention is a setting of the store object, not of the file: it applies to the writes of the store
  /// opened with it and to what its ``PersistentLiveData/history(limit:)`` shows.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.retention = .last(20)
  /// ```
  public var retention: HistoryRetention
  /// What ``PersistentStore/liveData(_:default:)`` does when the stored value no longer decodes.
  /// Default ``/PersistentLiveDataBackend/DecodeFailurePolicy/throwError``.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.onUndecodable = .lastDecodable
  /// ```
  public var onUndecodable: DecodeFailurePolicy
  /// How long a write waits for another process's write lock before failing with
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/busy(path:)``, in milliseconds. Default 5,000.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.busyTimeoutMilliseconds = 500   // fail fast in an interactive tool
  /// ```
  public var busyTimeoutMilliseconds: Int
  /// Whether opening a file also reads every page of it (SQLite's `PRAGMA quick_check`), so that a file
  /// damaged anywhere is refused before use. Default `false`.
  ///
  /// Open always checks what it reads itself — the header and size, the schema, the application — and then
  /// costs the same for ten keys as for a million: a key's latest version is read when its live data is first
  /// asked for. Every page a read meets is checked (SQLite's `PRAGMA cell_size_check`): a page damaged
  /// elsewhere is reported as ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` by
  /// the operation that reads it, naming the key, the version where known and the SQLite code, and as a
  /// ``/PersistentLiveDataBackend/StoreEvent/damagedPage(path:key:version:error:)``; nothing is written over
  /// it. Turn this on to refuse such a file at open instead, at about 0.1 s per 50 MB of file on every open;
  /// or call ``PersistentStore/verifyIntegrity()`` when it suits the app, from a connection of its own. A
  /// file whose open finds signs of an interrupted checkpoint is checked in full either way.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.verifiesIntegrityOnOpen = true   // a small store: refuse any damage before use
  /// ```
  public var verifiesIntegrityOnOpen: Bool
  /// How often the store checks whether another connection or process committed to its file
  /// (`PRAGMA data_version`, about 5 µs a check) when it is not woken by file notifications. Changed keys
  /// are reloaded and their observers notified. `nil` turns the detection off entirely (no watch, no
  /// polling). Default 50 ms.
  ///
  /// On Linux the store is normally woken within a millisecond or two of another process's commit
  /// (inotify, see ``watchesStoreFiles``) and polls only every ``externalChangeSafetyNetInterval``.
  /// This interval applies where that is not possible: on other systems, where inotify is missing or
  /// its watch limit is reached, with ``watchesStoreFiles`` off, or with `PLD_DISABLE_FILE_WATCH=1` in
  /// the environment. With `nil`, background checkpoints are off too and SQLite's automatic checkpoint
  /// does that work. In-memory stores never poll.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.externalChangePollInterval = .milliseconds(250)   // or nil: no other writer
  /// ```
  public var externalChangePollInterval: Duration?
  /// Whether the store asks the system to wake it when its file is written (inotify on Linux, one
  /// instance per process and one watch per folder), instead of only polling. Default `true`.
  ///
  /// Turn it off for a file system whose writes from other machines raise no notifications (NFS): the
  /// store then polls every ``externalChangePollInterval``. Elsewhere than Linux it has no effect (the
  /// store polls). Setting `PLD_DISABLE_FILE_WATCH=1` in the environment turns it off for every store of
  /// the process (read once, when the first store opens).
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.watchesStoreFiles = false   // a database on NFS: poll every 50 ms
  /// ```
  public var watchesStoreFiles: Bool
  /// How often a store woken by file notifications still checks for other connections' commits, in case
  /// a notification is lost. Default 1 s; never more often than ``externalChangePollInterval``.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.externalChangeSafetyNetInterval = .seconds(5)   // idle devices: fewer wake-ups
  /// ```
  public var externalChangeSafetyNetInterval: Duration
  /// Where the store reports what happens to it: opening (info; a refused or failed open: error),
  /// migrations applied (notice),
  /// stored values that no longer decode and the fallback taken (warning), writes slower than
  /// ``slowWriteThreshold`` (warning), versions arriving from other processes and background checkpoints
  /// (debug). `nil` (the default) logs nothing; the library never prints.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.logger = Logger(label: "com.example.state")
  /// ```
  public var logger: Logger?
  /// Writes slower than this are logged as warnings (when a ``logger`` is set). Default 100 ms.
  ///
  /// The time measured is the write without the encoding: waiting for the store's lock and SQLite's
  /// write lock, the insert and the commit with its sync.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.logger = Logger(label: "com.example.state")
  /// options.slowWriteThreshold = .milliseconds(20)
  /// ```
  public var slowWriteThreshold: Duration
  /// Whether deleted content is overwritten with zeros (`PRAGMA secure_delete = ON`), for apps that store
  /// secrets. Default `false`: SQLite's own default, which is off in SQLite's sources but on in some
  /// builds (Debian's and Ubuntu's libsqlite3 are compiled with `SQLITE_SECURE_DELETE`).
  ///
  /// With it, the rows pruned by retention or ``PersistentStore`` pruning, and the pages they leave, are
  /// zeroed in the database file; older copies in the WAL disappear at the next checkpoint that restarts
  /// it. Writes cost a little more (freed pages are written too).
  ///
  /// ```swift
  /// var options = StoreOptions(retention: .last(1))
  /// options.secureDelete = true   // an old token leaves no trace once replaced and checkpointed
  /// ```
  public var secureDelete: Bool
  /// Under ``Durability/normal``, the longest a commit stays out of stable storage: a commit arms a
  /// background sync of the write-ahead log this long after it, so a power loss (or an OS crash) loses at
  /// most the commits of the last interval — plus the time the sync takes and the timer's delay on a busy
  /// machine. Default 100 ms. `nil`: only checkpoints sync, as SQLite's own `synchronous=NORMAL` (a power
  /// loss may then lose every commit since the last checkpoint). Ignored under ``Durability/full``,
  /// where every commit is synced before it returns. An idle store arms nothing.
  ///
  /// ```swift
  /// var options = StoreOptions(durability: .normal)
  /// options.walSyncInterval = .milliseconds(20)   // a smaller window, a few more syncs
  /// ```
  public var walSyncInterval: Duration?
  /// Whether the store only reads. Default `false`.
  ///
  /// A read-only store never creates, migrates or writes anything: the file must exist and be of this
  /// library's schema (an older one throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/schemaTooOld(path:found:required:)``), and every
  /// write — `set`, `update`, `rollback`, `reset`, `write`, ``PersistentStore/transaction(isolation:_:)``,
  /// ``PersistentStore/removeKey(_:)``, a retention different from the recorded one — throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/readOnly(path:)`` with nothing changed. It still
  /// sees other processes' writes (observers are notified as usual), and opens a file whose folder cannot be
  /// written (read-only media, an immutable folder): SQLite then reads the database file alone, without its
  /// `-wal` file and without seeing later commits. ``PersistentStore/backup(to:)`` works. Reading a WAL file
  /// alongside writers needs its `-wal` and `-shm`: when they are missing, SQLite creates them (empty, as for
  /// any reader), and they stay after ``PersistentStore/close()``; the database file itself is never written.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.readOnly = true
  /// let flags = try PersistentStore(path: "/srv/flags/flags.db", options: options)
  /// ```
  public var readOnly: Bool
  /// The application a store file belongs to, recorded in the file and checked at every open. Default
  /// `nil` (an empty string counts as `nil`): any file is accepted.
  ///
  /// A store created (or first opened) with an identifier records it; opening that file later with a
  /// different identifier throws
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/applicationMismatch(path:expected:found:)`` and
  /// leaves it untouched — so a mistyped path to another app's store is refused, not used as a new state.
  /// Opening without an identifier accepts any file; a read-only store checks but never records.
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.applicationIdentifier = "com.example.flags"
  /// let store = try PersistentStore(path: path, options: options)
  /// ```
  public var applicationIdentifier: String?
  /// Whether the spans of write calls carry the key itself (attribute `pld.key`). Default `false`: keys
  /// may be personal data (`"user/jane@example.com/settings"`), and a tracing backend is often another
  /// service with other retention rules. The spans always carry `pld.key.hash`, enough to find one key's
  /// spans together (<doc:MetricsAndTraces>).
  ///
  /// ```swift
  /// var options = StoreOptions()
  /// options.tracesKeys = true   // keys are not personal data in this app
  /// ```
  public var tracesKeys: Bool = false

  /// Creates options; every parameter has the safe default.
  ///
  /// ```swift
  /// let options = StoreOptions(retention: .last(100))
  /// ```
  /// - Parameters:
  ///   - durability: ``Durability/full`` (default) or ``Durability/normal``.
  ///   - retention: ``/PersistentLiveDataBackend/HistoryRetention/all`` (default) or
  ///     ``/PersistentLiveDataBackend/HistoryRetention/last(_:)``.
  ///   - onUndecodable: What to do with a stored value that no longer decodes.
  public init(
    durability: Durability = .full, retention: HistoryRetention = .all,
    onUndecodable: DecodeFailurePolicy = .throwError
  ) {
    self.durability = durability
    self.retention = retention
    self.onUndecodable = onUndecodable
    self.busyTimeoutMilliseconds = 5_000
    self.verifiesIntegrityOnOpen = false
    self.externalChangePollInterval = .milliseconds(50)
    self.watchesStoreFiles = true
    self.externalChangeSafetyNetInterval = .seconds(1)
    self.logger = nil
    self.slowWriteThreshold = .milliseconds(100)
    self.secureDelete = false
    self.walSyncInterval = .milliseconds(100)
    self.readOnly = false
    self.applicationIdentifier = nil
  }
}

/// How hard a commit works to reach stable storage.
///
/// | | process crash | power loss / OS crash |
/// |---|---|---|
/// | ``full`` | nothing acknowledged is lost | nothing acknowledged is lost |
/// | ``normal`` | nothing acknowledged is lost | at most the commits of the last ``StoreOptions/walSyncInterval`` (100 ms) are lost; the file stays consistent |
///
/// ```swift
/// let cache = try PersistentStore(path: cachePath, options: StoreOptions(durability: .normal))
/// ```
public enum Durability: Sendable {
  /// `PRAGMA synchronous=FULL` in WAL mode: every commit is synced before `set` returns.
  ///
  /// ```swift
  /// let store = try PersistentStore(path: path, options: StoreOptions(durability: .full))
  /// ```
  case full
  /// `PRAGMA synchronous=NORMAL` in WAL mode: a commit does not wait for the disk; the write-ahead log is
  /// synced in the background ``StoreOptions/walSyncInterval`` after a commit, and at checkpoints.
  ///
  /// ```swift
  /// let store = try PersistentStore(path: path, options: StoreOptions(durability: .normal))
  /// try store.flush()   // everything committed so far is now durable
  /// ```
  case normal
}
