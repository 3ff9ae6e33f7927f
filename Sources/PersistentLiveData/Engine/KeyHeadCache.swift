/// The heads of the keys this store's connection wrote (``KeyHead``: newest version, recorded retention),
/// kept so that a write need not read its key's head from the file again: every write of a key after its
/// first skips the three lookups of ``SQL/keyHead``.
///
/// Memory may answer only for a file nothing else changed. Two counters say so:
/// - the pager's data version (``SQLiteConnection/pagerDataVersion``): it moves with each commit of this
///   connection and, as soon as this connection begins its next transaction, with any other connection's
///   commit — another store of this process, another process, `pld-tool`;
/// - the connection's change count (``SQLiteConnection/totalChanges``): it moves with every row this
///   connection inserts, updates or deletes, by whatever path (a removal, a retention recorded, a write of
///   a tool).
///
/// What a transaction learns (heads it read, heads its inserts made) stays in its own
/// ``TransactionHeads`` and joins the cache only when the transaction commits, with the counters taken
/// after that commit. A transaction that ends any other way — rolled back, its commit failed, rolled back
/// by SQLite after an I/O error — adds nothing; the change count its statements moved then no longer
/// matches and the cache starts over. So does a transaction in which a savepoint was rolled back, or in
/// which rows changed by another path: the heads it learned are not kept.
///
/// ```swift
/// var heads = TransactionHeads()
/// let head = try cache.head(of: "flags", in: &heads, connection: connection)   // inside BEGIN IMMEDIATE
/// // INSERT version head.latest + 1 …
/// cache.wrote(KeyHead(latest: head.latest + 1, recorded: head.recorded), of: "flags", in: &heads,
///             connection: connection)
/// // COMMIT succeeded:
/// cache.committed(heads, connection: connection)
/// ```
struct KeyHeadCache {
  /// Where the counters stood when the cache was last known to match the file.
  struct Stamp: Equatable {
    var dataVersion: UInt32
    var changes: Int
  }

  /// The most heads kept: past it the cache starts over (a store that writes ever new keys must not
  /// grow it without end).
  static let capacity = 4_096

  private var heads: [StoreKey: KeyHead] = [:]
  private var validAt: Stamp?

  /// How many heads are kept (at most ``capacity``).
  var count: Int { heads.count }

  /// The head memory holds for `key`, if any (whether a write may use it depends on the counters).
  func cachedHead(of key: String) -> KeyHead? { heads[key] }

  /// The head of `key`, read by a write inside its write transaction (the lock is held): from the
  /// transaction's own heads, from the cache when nothing changed the file since it was last right,
  /// otherwise from the file.
  mutating func head(
    of key: String, in transaction: inout TransactionHeads, connection: SQLiteConnection
  ) throws -> KeyHead {
    let changes = connection.totalChanges
    if !transaction.hasStarted {
      transaction.hasStarted = true
      transaction.expectedChanges = changes
      let now = connection.pagerDataVersion.map { Stamp(dataVersion: $0, changes: changes) }
      transaction.mayUseCache = now != nil && now == validAt
      if !transaction.mayUseCache {
        heads.removeAll(keepingCapacity: true)
        validAt = nil
      }
    } else if changes != transaction.expectedChanges {
      transaction.isReliable = false  // rows changed by another path within the transaction
    }
    if transaction.isReliable {
      if let head = transaction.head(of: key) ?? (transaction.mayUseCache ? heads[key] : nil) { return head }
    }
    let head = try StoreDatabase.keyHead(key: key, connection: connection)
    if transaction.isReliable { transaction.set(head, of: key) }
    return head
  }

  /// Records the head a write made (its insert, and the prune after it, ran).
  func wrote(
    _ head: KeyHead, of key: String, in transaction: inout TransactionHeads, connection: SQLiteConnection
  ) {
    guard transaction.isReliable else { return }
    transaction.set(head, of: key)
    transaction.expectedChanges = connection.totalChanges
  }

  /// After the transaction of `transaction` committed: its heads join the cache, now right as of this
  /// commit, unless something it cannot account for happened in it.
  mutating func committed(_ transaction: TransactionHeads, connection: SQLiteConnection) {
    guard transaction.hasStarted else { return }  // no write read a head: nothing learned
    let changes = connection.totalChanges
    guard transaction.isReliable, changes == transaction.expectedChanges,
      let dataVersion = connection.pagerDataVersion
    else {
      forget()
      return
    }
    if heads.count + transaction.count > Self.capacity { heads.removeAll() }
    if let first = transaction.first { heads[first.key] = first.head }
    heads.merge(transaction.others) { _, new in new }
    validAt = Stamp(dataVersion: dataVersion, changes: changes)
  }

  /// Drops every head.
  mutating func forget() {
    heads.removeAll()
    validAt = nil
  }
}

/// What one write transaction learned of key heads, for ``KeyHeadCache``.
struct TransactionHeads {
  /// The heads read or written in the transaction: the first key's inline (a lone `set` allocates no
  /// dictionary and hashes its key once less), the others' in a dictionary.
  fileprivate private(set) var first: (key: StoreKey, head: KeyHead)?
  fileprivate private(set) var others: [StoreKey: KeyHead] = [:]
  /// Whether a head was asked for yet (the transaction's first question checks the cache).
  fileprivate(set) var hasStarted = false
  /// Whether the cache matched the file when the transaction began.
  fileprivate(set) var mayUseCache = false
  /// The connection's change count after the last step the cache accounted for.
  fileprivate(set) var expectedChanges = 0
  /// False once something happened that the heads above may not reflect (a savepoint rolled back, rows
  /// changed by another path): the rest of the transaction reads the file and teaches the cache nothing.
  var isReliable = true

  /// How many heads the transaction holds.
  fileprivate var count: Int { (first == nil ? 0 : 1) + others.count }

  fileprivate func head(of key: String) -> KeyHead? {
    if let first, StoreKey.same(first.key.text, key) { return first.head }
    return others.isEmpty ? nil : others[StoreKey(key)]
  }

  fileprivate mutating func set(_ head: KeyHead, of key: String) {
    if first.map({ StoreKey.same($0.key.text, key) }) ?? true {
      first = (StoreKey(key), head)
    } else {
      others[StoreKey(key)] = head
    }
  }
}
