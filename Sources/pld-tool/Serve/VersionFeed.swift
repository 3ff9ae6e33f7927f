import PersistentLiveData
import Synchronization

/// What the inspector knows of every key, and the versions committed since it started, for
/// `GET /api/keys` and the Server-Sent Events of `GET /api/events`.
///
/// Each published version gets the next event id. A client that reconnects with the id of the last
/// event it received (`Last-Event-ID`) gets every event after it, while the feed still holds them
/// (the newest ``keptEvents``); otherwise, or when it comes without an id, it gets one `snapshot`
/// event with every key's latest version, which brings it to the same state.
///
/// ```swift
/// let feed = VersionFeed(keys: try await source.summaries())
/// feed.publish([VersionEvent(key: "a", version: 2, writtenAtMilliseconds: now, summary: summary)])
/// for await item in feed.subscribe(after: 0) { send(item) }
/// ```
final class VersionFeed: Sendable {
  /// What a subscriber receives.
  enum Item: Sendable {
    /// A committed version, with its event id.
    case version(id: Int64, VersionEvent)
    /// A key that was removed, with its event id.
    case removed(id: Int64, key: String)
    /// Every key's latest version, as of the event id: the JSON array of their summaries.
    case snapshot(id: Int64, String)
    /// Nothing new: keeps the connection alive.
    case ping
  }

  /// How many of the newest events a reconnecting client can be given one by one.
  static let keptEvents = 20_000

  /// A key's summary and its JSON text, made once per version.
  private struct Entry {
    var summary: KeySummary
    var json: String

    init(_ summary: KeySummary) {
      self.summary = summary
      json = summary.json.compact
    }
  }

  private struct State {
    /// By the key's bytes (two spellings of "café" are two keys, as in the store).
    var keys: [StoreKey: Entry] = [:]
    /// The keys in byte order; nil when a key came or went since it was sorted.
    var sorted: [StoreKey]?
    var lastID: Int64 = 0
    /// The newest events, oldest first.
    var events: [Item] = []
    var subscribers: [Int: AsyncStream<Item>.Continuation] = [:]
    var nextSubscriber = 0
  }

  private let state: Mutex<State>

  init(keys: [KeySummary]) {
    var initial = State()
    for key in keys { initial.keys[StoreKey(key.key)] = Entry(key) }
    _ = Self.json(&initial, limit: 0)  // sorts the keys once, before the first page asks
    state = Mutex(initial)
  }

  /// The JSON array of the summaries of the first `limit` keys (every key when nil), in byte order of
  /// the keys, and the id of the newest event they include.
  func snapshotJSON(limit: Int? = nil, prefix: String? = nil) -> (json: String, lastID: Int64) {
    state.withLock { state in
      (Self.json(&state, limit: limit, prefix: prefix), state.lastID)
    }
  }

  /// The summary of one key, or nil when it is not known.
  func summary(of key: String) -> KeySummary? {
    state.withLock { $0.keys[StoreKey(key)]?.summary }
  }

  /// The current version of every key, by the key's bytes.
  func versions() -> [StoreKey: Int64] {
    state.withLock { state in state.keys.mapValues(\.summary.version) }
  }

  /// Records new versions (each event with its key's new summary, when it is the latest) and removed
  /// keys, and sends them to every subscriber.
  func publish(_ events: [VersionEvent], removed: [String] = []) {
    guard !events.isEmpty || !removed.isEmpty else { return }
    state.withLock { state in
      var items: [Item] = []
      for event in events {
        if let summary = event.summary {
          if state.keys.updateValue(Entry(summary), forKey: StoreKey(event.key)) == nil { state.sorted = nil }
        }
        state.lastID += 1
        items.append(.version(id: state.lastID, event))
      }
      for key in removed where state.keys.removeValue(forKey: StoreKey(key)) != nil {
        state.sorted = nil
        state.lastID += 1
        items.append(.removed(id: state.lastID, key: key))
      }
      state.events.append(contentsOf: items)
      if state.events.count > Self.keptEvents {
        state.events.removeFirst(state.events.count - Self.keptEvents)
      }
      for continuation in state.subscribers.values {
        for item in items { continuation.yield(item) }
      }
    }
  }

  /// Sends a ``Item/ping`` to every subscriber.
  func ping() {
    state.withLock { state in
      for continuation in state.subscribers.values { continuation.yield(.ping) }
    }
  }

  /// The events after `lastID` and every later one, or — when `lastID` is nil, unknown or older than
  /// the events kept — a snapshot first. The stream ends when ``finishAll()`` is called or its
  /// consumer stops.
  func subscribe(after lastID: Int64?) -> AsyncStream<Item> {
    let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
    let number: Int = state.withLock { state in
      let oldestKept = state.events.first.map(Self.id) ?? (state.lastID + 1)
      if let lastID, lastID <= state.lastID, lastID >= oldestKept - 1 {
        for item in state.events where Self.id(item) > lastID { continuation.yield(item) }
      } else {
        continuation.yield(.snapshot(id: state.lastID, Self.json(&state, limit: nil)))
      }
      let number = state.nextSubscriber
      state.nextSubscriber += 1
      state.subscribers[number] = continuation
      return number
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: number) }
    }
    return stream
  }

  /// Ends every subscriber's stream (the server is stopping).
  func finishAll() {
    let continuations = state.withLock { state in
      defer { state.subscribers.removeAll() }
      return Array(state.subscribers.values)
    }
    for continuation in continuations { continuation.finish() }
  }

  private static func id(_ item: Item) -> Int64 {
    switch item {
    case .version(let id, _), .removed(let id, _), .snapshot(let id, _): id
    case .ping: 0
    }
  }

  private static func json(_ state: inout State, limit: Int?, prefix: String? = nil) -> String {
    let sorted =
      state.sorted ?? state.keys.keys.sorted { $0.text.utf8.lexicographicallyPrecedes($1.text.utf8) }
    state.sorted = sorted
    var selected = sorted[...]
    if let prefix, !prefix.isEmpty {
      // The keys that start with the prefix are one run of the byte-ordered list: found by a binary
      // search for its start, then taken while they match.
      var low = 0
      var high = sorted.count
      while low < high {
        let middle = (low + high) / 2
        if sorted[middle].text.utf8.lexicographicallyPrecedes(prefix.utf8) {
          low = middle + 1
        } else {
          high = middle
        }
      }
      let end = sorted[low...].firstIndex { !$0.text.utf8.starts(with: prefix.utf8) } ?? sorted.count
      selected = sorted[low..<end]
    }
    var text = "["
    for (index, key) in selected.prefix(limit ?? selected.count).enumerated() {
      if index > 0 { text += "," }
      text += state.keys[key]?.json ?? "null"
    }
    return text + "]"
  }
}
