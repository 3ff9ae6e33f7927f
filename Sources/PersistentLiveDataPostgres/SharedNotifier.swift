import Logging
import PersistentLiveDataBackend
import PostgresNIO

/// Sends the notifications of committed writes, after their commit, in statements of their own.
///
/// A transaction with a pending notification takes an instance-wide lock at commit (PostgreSQL queues
/// notifications in commit order) and flushes its WAL under it, so writers that notify inside their
/// transaction stop sharing WAL flushes: with pgbench and fsync on, 16–64 clients ran at a quarter of the
/// throughput of the same rows without the notification. A `SELECT pg_notify(…)` of its own writes no WAL
/// and holds that lock only for a moment.
///
/// The caller's write does not wait for its notification: its data is durable and memory moved when the
/// commit returns, the notification only tells other replicas sooner. Waiting would add a round trip to
/// every write, and a notification that fails must not turn an acknowledged commit into an error anyway.
/// So ``send(_:)`` queues and returns; one task at a time sends what is queued, logs a failure and goes on.
///
/// **What a notification costs follows the statements, not the writes.** Each statement wakes every
/// listening connection on the server and in every replica, so a replica that sent one per write spent
/// as much on notifying as on writing. The queue is sent as one statement, the newest version of each key
/// only, several writes to a payload (``SharedNotification/entry``, one per line). While writes come one
/// at a time, each one's notification leaves at once. Once they come faster than a statement returns
/// (a notification was queued while one was in flight), the replica sends at most one statement per
/// interval, which gathers what was committed meanwhile; it goes back to sending at once when an
/// interval gathered a single notification or none.
///
/// The interval is ``interval`` times the replicas heard writing lately (``WritingReplicas``), at most
/// ``longestInterval``: every statement reaches every listener, so with R replicas writing, statements
/// every 25 ms each made R × R / 25 ms deliveries a second, and the server's and the replicas' work per
/// write grew with the replicas held (at 16 replica processes the store fell from 0.85× to 0.64× raw
/// postgres-nio with prepared statements). Spaced by their number, the replicas together send about 40
/// statements a second, and each delivery reaches R listeners. Another replica hears a write at most one
/// interval later than it would have, under load only: 25 ms with one writing replica, 100 ms with four.
///
/// A notification can be lost — the process dies after the commit, or the statement fails. The
/// periodic catch-up (``PostgresStoreOptions/catchUpInterval``, in ``SharedListener``) delivers that
/// version anyway: it asks the server which keys changed since its last look (``SharedChangeFeed``).
///
/// ```swift
/// notifier.send([SharedNotification(write: write, committed: version, origin: origin)])
/// ```
final class SharedNotifier: Sendable {
  private struct State {
    var pending: [SharedNotification] = []
    var isSending = false
    /// When the last statement started, and whether the queue is sent once per interval.
    var lastStart: ContinuousClock.Instant?
    var isGathering = false
    /// Whether a notification was queued while a statement was in flight.
    var queuedWhileSending = false
    /// Whether a write is in flight that sends its own notification (``claimInline()``), and when the
    /// last one ended.
    var isInlineInFlight = false
    var lastInlineEnd: ContinuousClock.Instant?
    /// Whether the server refused a write's own notification (``inlineRefused(_:)``): the notifier sends
    /// every notification from then on.
    var isInlineRefused = false
  }

  private let state = Locked(State())
  private let idle = ChangeSignal()
  private let client: PostgresClient
  private let timeout: Duration
  private let logger: Logger
  /// Whether the statement goes as a prepared statement (``PostgresStoreOptions/preparesStatements``).
  private let prepares: Bool

  /// The most notifications one statement sends.
  static let batchLimit = 2_000
  /// The time between two statements while writes come faster than a statement returns, per replica
  /// heard writing lately (this one included).
  static let interval: Duration = .milliseconds(25)
  /// The longest time between two statements, however many replicas write.
  static let longestInterval: Duration = .milliseconds(250)
  /// The most notifications of a statement that carry their rows (``SharedNotification/row``).
  static let carryingLimit = 8
  /// The longest payload (bytes) this store sends: PostgreSQL refuses 8,000 and more.
  static let payloadLimit = 7_990

  /// The other replicas heard writing lately, which space this one's statements.
  let writers = WritingReplicas()

  init(client: PostgresClient, timeout: Duration, logger: Logger, prepares: Bool = true) {
    self.client = client
    self.timeout = timeout
    self.logger = logger
    self.prepares = prepares
  }

  /// Whether the write about to be sent may carry its own notification in its statement
  /// (``SharedStatements/writeSQL(head:pruning:notifying:)``): yes while this replica's writes come one at
  /// a time — nothing queued or being sent, not gathering, no other such write in flight, and not right
  /// after the last one (``backToBack``). The caller calls ``endInline()`` once its write returned or
  /// failed. A notification queued meanwhile (another
  /// write) counts as a burst: the notifier starts gathering, and the writes after it leave their
  /// notifications to it. (Inside a write under load, a notification would serialize the commits of every
  /// writer on the server; one at a time, it saves a statement and a round trip before another replica
  /// hears of the write.)
  func claimInline(at now: ContinuousClock.Instant = .now) -> Bool {
    state.withLock { state in
      guard !state.isInlineRefused, !state.isInlineInFlight, !state.isSending, !state.isGathering,
        state.pending.isEmpty, state.lastInlineEnd.map({ now - $0 >= Self.backToBack }) ?? true
      else { return false }
      state.isInlineInFlight = true
      return true
    }
  }

  /// Writes that follow one another closer than this are a burst, even from one task: the next one
  /// leaves its notification to the notifier, whose statement then gathers the burst's. (A task writing
  /// in a loop, each write carrying its notification, made the server wake every listener at every
  /// write: 50 µs more of the server's CPU per write on a durable server, where the notifier sends one
  /// statement per interval.) A caller that does anything between its writes — waits for another
  /// replica to hear, serves a request — is slower than this.
  static let backToBack: Duration = .microseconds(100)

  /// Whether the server's `reason` for refusing a statement is its notification (`pg_notify` not
  /// granted to the role, the notification queue full).
  static func isNotificationRefusal(_ reason: String) -> Bool {
    reason.lowercased().contains("notif")
  }

  /// The server refused a write that carried its notification, with `reason`: when it is the
  /// notification's (``isNotificationRefusal(_:)``), no write carries one from then on — the notifier's
  /// statement fails instead, logged, and the write commits.
  func inlineRefused(_ reason: String) {
    guard Self.isNotificationRefusal(reason) else { return }
    state.withLock { $0.isInlineRefused = true }
    logger.notice(
      "The server refused a notification inside a write; notifications go in statements of their own",
      metadata: ["error": "\(reason)"])
  }

  /// Ends what ``claimInline()`` started.
  func endInline(at now: ContinuousClock.Instant = .now) {
    state.withLock {
      $0.isInlineInFlight = false
      $0.lastInlineEnd = now
    }
  }

  /// Queues the notifications of a commit; they are sent at once if nothing is being sent, else with
  /// the next statement.
  func send(_ notifications: [SharedNotification]) {
    guard !notifications.isEmpty else { return }
    let start = state.withLock { state -> Bool in
      state.pending.append(contentsOf: notifications)
      if state.isInlineInFlight { state.queuedWhileSending = true }
      if state.isSending {
        state.queuedWhileSending = true
        return false
      }
      state.isSending = true
      return true
    }
    guard start else { return }
    Task { await drain() }
  }

  /// Waits until every queued notification was sent (or failed), at most `limit`.
  func flush(within limit: Duration) async {
    _ = try? await withDeadline(limit, operation: "notify") { [self] in
      await idle.wait(until: { state.withLock { $0.pending.isEmpty && !$0.isSending } })
    }
  }

  private func drain() async {
    let clock = ContinuousClock()
    while true {
      // While gathering, the next statement waits out the interval since the last one.
      let wake = state.withLock { state -> ContinuousClock.Instant? in
        guard state.isGathering, let last = state.lastStart else { return nil }
        return last + Self.interval(writers: writers.count())
      }
      if let wake, wake > clock.now { try? await clock.sleep(until: wake) }
      let (batch, carryingRows) = state.withLock { state -> ([SharedNotification], Bool) in
        let batch = Self.newestPerKey(state.pending.prefix(Self.batchLimit))
        state.pending.removeFirst(min(Self.batchLimit, state.pending.count))
        // Rows travel with their entries only while writes come one at a time: under load every
        // listener would parse them, and a read saves no time there.
        let carryingRows = !state.isGathering && batch.count <= Self.carryingLimit
        if state.isGathering {
          // Writes slowed down: send the next one at once.
          if batch.count <= 1 { state.isGathering = false }
        } else if state.queuedWhileSending {
          state.isGathering = true
        }
        state.queuedWhileSending = false
        state.lastStart = clock.now
        if batch.isEmpty { state.isSending = false }
        return (batch, carryingRows)
      }
      if batch.isEmpty {
        idle.signal()
        return
      }
      await sendStatement(batch, carryingRows: carryingRows)
    }
  }

  /// Sends `batch` in one statement, its small rows too when `carryingRows`, logging a failure.
  private func sendStatement(_ batch: [SharedNotification], carryingRows: Bool) async {
    let payloads = Self.payloads(batch.map { $0.line(carryingRow: carryingRows) })
    do {
      try await withDeadline(timeout, operation: "notify") { [client, prepares] in
        let statement = NotifyStatement(payloads: payloads)
        if prepares {
          for try await _ in try await client.execute(statement, logger: SharedSchema.quiet) {}
        } else {
          let rows = try await client.query(
            PostgresQuery(unsafeSQL: NotifyStatement.sql, binds: statement.makeBindings()),
            logger: SharedSchema.quiet)
          for try await _ in rows {}
        }
      }
    } catch {
      // The data committed: the other replicas' periodic catch-up brings these versions.
      logger.warning(
        "Could not notify other replicas of committed writes; they catch up by version",
        metadata: ["writes": "\(batch.count)", "error": "\(SharedDatabase.describe(error))"])
    }
  }

  /// The time between two statements while gathering, with `writers` replicas writing.
  static func interval(writers: Int) -> Duration {
    min(interval * max(1, writers), longestInterval)
  }

  /// `entries` joined by newlines into as few payloads as fit ``payloadLimit``, each after the format's first
  /// line (``SharedNotification/Format/marker``). An entry is at most ``longestEntry`` bytes long and is
  /// never split: its only newline is the one before its row's line
  /// (``SharedNotification/line(carryingRow:)``).
  static func payloads(_ entries: [String]) -> [String] {
    var payloads: [String] = []
    let header = SharedNotification.Format.marker
    var current = header
    for entry in entries {
      if current.utf8.count > header.utf8.count, current.utf8.count + 1 + entry.utf8.count > payloadLimit {
        payloads.append(current)
        current = header
      }
      current += "\n"
      current += entry
    }
    if current.utf8.count > header.utf8.count { payloads.append(current) }
    return payloads
  }

  /// The longest entry a payload holds beside its format line.
  static var longestEntry: Int { payloadLimit - SharedNotification.Format.marker.utf8.count - 1 }

  /// The newest version of each key among `notifications`, in the order keys first appear: an older one
  /// tells another replica nothing the newer does not.
  static func newestPerKey(_ notifications: ArraySlice<SharedNotification>) -> [SharedNotification] {
    var index: [String: Int] = [:]
    var newest: [SharedNotification] = []
    for notification in notifications {
      if let at = index[notification.keyHash] {
        if notification.version > newest[at].version { newest[at] = notification }
      } else {
        index[notification.keyHash] = newest.count
        newest.append(notification)
      }
    }
    return newest
  }
}

/// The notifier's statement, prepared once per connection: sent as a query, the server parsed, analysed
/// and planned it again for every statement — while writes come one at a time, once per write.
///
/// ```swift
/// for try await _ in try await client.execute(NotifyStatement(payloads: payloads), logger: quiet) {}
/// ```
struct NotifyStatement: PostgresPreparedStatement {
  /// How many notifications it sent (a row is needed to read the statement's end; `pg_notify` returns
  /// `void`).
  typealias Row = Int64
  static let sql = """
    SELECT count(*) FROM (SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload) AS sent
    """
  static let name = "pld_notify"
  static let bindingDataTypes: [PostgresDataType] = [.text, .textArray]
  let payloads: [String]

  func makeBindings() -> PostgresBindings {
    var binds = PostgresBindings(capacity: 2)
    binds.append(SharedDatabase.channel)
    binds.append(payloads)
    return binds
  }

  func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The replicas whose notifications this one heard in the last ``window``, itself included: how many
/// share the server's notification work.
///
/// ```swift
/// writers.heard(entry.origin)        // the listener, for each payload
/// let interval = SharedNotifier.interval(writers: writers.count())
/// ```
final class WritingReplicas: Sendable {
  /// How long a replica counts after its last notification.
  static let window: Duration = .seconds(2)

  private let lastHeard = Locked<[String: ContinuousClock.Instant]>([:])

  /// Notes a notification from `origin`.
  func heard(_ origin: Substring.UTF8View, at now: ContinuousClock.Instant = .now) {
    let name = String(Substring(origin))
    lastHeard.withLock { $0[name] = now }
  }

  /// This replica and the others heard within ``window`` of `now`; forgets the older ones.
  func count(at now: ContinuousClock.Instant = .now) -> Int {
    lastHeard.withLock { heard in
      heard = heard.filter { now - $0.value <= Self.window }
      return heard.count + 1
    }
  }
}

extension SharedDatabase {
  /// The entries of a notification's `payload`; nil for a payload in a format newer than this store
  /// knows, after asking the listener's catch-up to look now: which keys it names is unknown here, so
  /// what changed since the last look is read from the server at once, not at the next periodic look.
  func entries(of payload: String) -> [SharedNotification.Entry]? {
    switch SharedNotification.Format.read(payload) {
    case .entries(let entries): return entries
    case .unknown(let format):
      logger.debug("A notification in a newer format; catching up", metadata: ["format": "\(format)"])
      lookRequests.signal()
      return nil
    }
  }
}

extension SharedDatabase {
  /// Moves the live value of `key` and the collections that hold it to `state` — read from the server,
  /// or a row another replica's notification carried — and notifies their observers. A version this
  /// replica cannot decode is noted, so that it is logged once, not read again at every catch-up.
  func applyOtherReplicas(_ state: StoredKeyState, of key: String) {
    applyOtherReplicas([(key, state)])
  }

  /// ``applyOtherReplicas(_:of:)`` of several keys read by one catch-up: the live collections that hold
  /// them move once, as one new version (the members a transaction wrote stay one version), and every
  /// observer is notified after all of them moved.
  func applyOtherReplicas(_ states: [(key: String, state: StoredKeyState)]) {
    receive(states).notifyObservers()
    for (key, state) in states {
      guard let instance = registry.instance(for: key) else { continue }
      if case .row(let row) = state, instance.storedVersion < row.version {
        noteUndecodable(key: key, version: row.version)
      }
    }
  }
}
