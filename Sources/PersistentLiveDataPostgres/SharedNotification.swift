import Foundation
import PersistentLiveDataBackend

/// One committed write's notification: the entry `VERSION ORIGIN k KEY`, or `VERSION ORIGIN h HASH` for
/// a key too long for a payload or holding a newline (a payload's entries are separated by newlines).
///
/// A small committed row can travel with its entry, on the line after it (``rowLine``), so that a
/// listener moves its live value without reading the row back from the server: one round trip fewer
/// between a write on one replica and an observer on another. The notifier sends rows only while writes
/// come one at a time (not while it gathers a burst), so that under load every listener parses entries
/// only.
///
/// ```swift
/// let notification = SharedNotification(write: write, committed: version, origin: origin)
/// let text = notification.line(carryingRow: true)   // "7 5f3a k flags\n= 1 1764460800000 -1 -1 true"
/// ```
struct SharedNotification: Sendable {
  /// The key written or removed, and its hash (``KeyHash``).
  let key: String
  let keyHash: String
  /// The version committed (or the one a removal took).
  let version: Int64
  /// The replica that committed it (``SharedDatabase/origin``).
  let origin: String
  /// What a listener needs to apply the version without reading it; nil for a removal.
  let row: CarriedRow?

  /// The parts of a committed row that its entry does not already say.
  struct CarriedRow: Sendable {
    let schemaVersion: Int
    let writtenAtMilliseconds: Int64
    let attribution: WriteAttribution?
    let payload: String
  }

  /// The longest value (bytes of its JSON) a notification carries: a larger one is read by the listener.
  static let carriedPayloadLimit = 1_024

  init(write: SharedWrite, committed: CommittedVersion, origin: String) {
    self.init(
      key: write.key, keyHash: write.keyHash, version: committed.version, origin: origin,
      row: CarriedRow(
        schemaVersion: write.schemaVersion, writtenAtMilliseconds: committed.writtenAtMilliseconds,
        attribution: write.attribution, payload: write.payload))
  }

  /// The notification of `version` of `key` — written (with its `row`), or the version a removal took.
  ///
  /// It keeps its parts only: the text is made by the notifier's task when it sends it (``line(carryingRow:)``),
  /// not on the writer's path, and not at all for a version a newer one of the same key replaced in the
  /// queue (``SharedNotifier/newestPerKey(_:)``).
  init(key: String, keyHash: String, version: Int64, origin: String, row: CarriedRow? = nil) {
    self.key = key
    self.keyHash = keyHash
    self.version = version
    self.origin = origin
    self.row = row
  }

  /// Whether the entry names its key (`k`) rather than its hash: a key short enough for a payload,
  /// without a newline. (Bytes, not `String.contains(_:)`: Foundation's searches a bridged copy of the
  /// key, and cost the writer a third of its notification.)
  var isNamed: Bool {
    key.utf8.count <= SharedDatabase.longestNotifiedKey && !key.utf8.contains(UInt8(ascii: "\n"))
  }

  /// `VERSION ORIGIN k KEY`, or `VERSION ORIGIN h HASH` when the key is not ``isNamed``.
  var entry: String { entry(named: isNamed) }

  private func entry(named: Bool) -> String {
    named ? "\(version) \(origin) k \(key)" : "\(version) \(origin) h \(keyHash)"
  }

  /// The entry, followed by its row's line when `carryingRow` and the row can travel: its key is named
  /// (not hashed), its value is at most ``carriedPayloadLimit`` bytes, nothing in it holds a newline,
  /// and both lines fit a payload (``SharedNotifier/longestEntry``).
  func line(carryingRow: Bool) -> String {
    let named = isNamed
    let entry = entry(named: named)
    guard carryingRow, named, let row, let rowLine = Self.rowLine(row),
      entry.utf8.count + 1 + rowLine.utf8.count <= SharedNotifier.longestEntry
    else { return entry }
    return entry + "\n" + rowLine
  }

  /// `= SCHEMA MILLISECONDS AUTHOR-BYTES REASON-BYTES AUTHORREASONPAYLOAD`, the byte counts -1 for an
  /// absent author or reason; nil for a row that cannot travel.
  static func rowLine(_ row: CarriedRow) -> String? {
    rowTail(row).map { "= \(row.schemaVersion) \(row.writtenAtMilliseconds) " + $0 }
  }

  /// What follows the time in ``rowLine(_:)``; nil for a row that cannot travel (a value over
  /// ``carriedPayloadLimit``, a newline in it or in the attribution).
  private static func rowTail(_ row: CarriedRow) -> String? {
    let newline = UInt8(ascii: "\n")
    let author = row.attribution?.author
    let reason = row.attribution?.reason
    guard row.payload.utf8.count <= carriedPayloadLimit, !row.payload.utf8.contains(newline),
      author?.utf8.contains(newline) != true, reason?.utf8.contains(newline) != true
    else { return nil }
    return "\(author?.utf8.count ?? -1) \(reason?.utf8.count ?? -1) "
      + "\(author ?? "")\(reason ?? "")\(row.payload)"
  }

  /// A write's notification as the write's own statement sends it
  /// (``SharedStatements/writeSQL(head:pruning:notifying:)``): the payload is `beforeVersion`, the committed version, `afterVersion`, then — when the row travels —
  /// `beforeTime`, its `written_at` in milliseconds and `afterTime`: the same text, in the same format,
  /// as the notifier's payload of one entry (``line(carryingRow:)``).
  struct InlineParts: Sendable {
    let beforeVersion: String
    let afterVersion: String
    let beforeTime: String?
    let afterTime: String?

    /// The parts of `write`'s notification from `origin`, its row carried when it can travel and the
    /// payload fits whatever the version and time turn out to be.
    init(write: SharedWrite, origin: String) {
      let notification = SharedNotification(
        key: write.key, keyHash: write.keyHash, version: 0, origin: origin,
        row: CarriedRow(
          schemaVersion: write.schemaVersion, writtenAtMilliseconds: 0, attribution: write.attribution,
          payload: write.payload))
      let named = notification.isNamed
      beforeVersion = Format.marker + "\n"
      afterVersion = named ? " \(origin) k \(write.key)" : " \(origin) h \(write.keyHash)"
      let head = "\n= \(write.schemaVersion) "
      // The longest an Int64 is in decimal, with its sign: for the version and for the time.
      let widest = 20
      if named, let row = notification.row, let tail = SharedNotification.rowTail(row),
        beforeVersion.utf8.count + widest + afterVersion.utf8.count + head.utf8.count + widest + 1
          + tail.utf8.count <= SharedNotifier.payloadLimit
      {
        beforeTime = head
        afterTime = " " + tail
      } else {
        beforeTime = nil
        afterTime = nil
      }
    }
  }

  /// One entry of a payload another replica sent, read from its UTF-8 without copying: nil for one in
  /// no format this store writes. A listener reads every entry of every replica, so this is on the path
  /// of every write anywhere.
  struct Entry {
    let version: Int64
    let origin: Substring.UTF8View
    /// `KEY` for `k`, `HASH` for `h`.
    let isHash: Bool
    let name: Substring.UTF8View
    /// The row the line after the entry carried, if any (``SharedNotification/line(carryingRow:)``).
    var row: Row?

    init?(_ line: Substring.UTF8View) {
      let space = UInt8(ascii: " ")
      guard let afterVersion = line.firstIndex(of: space) else { return nil }
      guard afterVersion > line.startIndex, let version = Self.integer(line[..<afterVersion]), version >= 0
      else { return nil }
      let rest = line[line.index(after: afterVersion)...]
      guard let afterOrigin = rest.firstIndex(of: space) else { return nil }
      let kind = rest.index(after: afterOrigin)
      guard kind < rest.endIndex, rest[kind] == UInt8(ascii: "k") || rest[kind] == UInt8(ascii: "h") else {
        return nil
      }
      let separator = rest.index(after: kind)
      guard separator < rest.endIndex, rest[separator] == space else { return nil }
      self.version = version
      origin = rest[..<afterOrigin]
      isHash = rest[kind] == UInt8(ascii: "h")
      name = rest[rest.index(after: separator)...]
    }

    /// A committed row carried on the line after its entry, its text still in the payload.
    struct Row {
      let schemaVersion: Int
      let writtenAtMilliseconds: Int64
      let author: Substring.UTF8View?
      let reason: Substring.UTF8View?
      let payload: Substring.UTF8View

      /// Reads `= SCHEMA MILLISECONDS AUTHOR-BYTES REASON-BYTES TEXT`; nil for anything else.
      init?(_ line: Substring.UTF8View) {
        let space = UInt8(ascii: " ")
        guard line.starts(with: "= ".utf8) else { return nil }
        var rest = line.dropFirst(2)
        var numbers: [Int64] = []
        for _ in 0..<4 {
          guard let end = rest.firstIndex(of: space), let number = Entry.integer(rest[..<end]) else {
            return nil
          }
          numbers.append(number)
          rest = rest[rest.index(after: end)...]
        }
        guard numbers[0] >= 1, numbers[0] <= Int64(Int32.max), numbers[2] >= -1, numbers[3] >= -1,
          let author = Self.take(numbers[2], from: &rest), let reason = Self.take(numbers[3], from: &rest)
        else { return nil }
        schemaVersion = Int(numbers[0])
        writtenAtMilliseconds = numbers[1]
        self.author = author.isPresent ? author.text : nil
        self.reason = reason.isPresent ? reason.text : nil
        payload = rest
      }

      /// The first `count` bytes of `rest` (nothing for -1), moving `rest` past them; nil when fewer
      /// are left.
      private static func take(
        _ count: Int64, from rest: inout Substring.UTF8View
      ) -> (isPresent: Bool, text: Substring.UTF8View)? {
        guard count >= 0 else { return (false, rest[rest.startIndex..<rest.startIndex]) }
        guard let end = rest.index(rest.startIndex, offsetBy: Int(count), limitedBy: rest.endIndex) else {
          return nil
        }
        let text = rest[..<end]
        rest = rest[end...]
        return (true, text)
      }

      /// The committed row of version `version` of `key`.
      func stored(key: String, version: Int64) -> StoredRow {
        StoredRow(
          key: key, version: version, writtenAtMilliseconds: writtenAtMilliseconds, payload: Data(payload),
          schemaVersion: schemaVersion,
          attribution: WriteAttribution(
            storedAuthor: author.map { String(Substring($0)) }, reason: reason.map { String(Substring($0)) }))
      }
    }

    /// A decimal integer, optionally negative, without overflow; nil for anything else.
    static func integer(_ digits: Substring.UTF8View) -> Int64? {
      var bytes = digits[...]
      let negative = bytes.first == UInt8(ascii: "-")
      if negative { bytes = bytes.dropFirst() }
      guard !bytes.isEmpty else { return nil }
      var value: Int64 = 0
      for byte in bytes {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflowAdding) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
        guard !overflow, !overflowAdding else { return nil }
        value = sum
      }
      return negative ? -value : value
    }

    /// Each entry of `payload`, one per line, skipping lines in no known format; a row line attaches to
    /// the entry on the line just above it.
    static func all(in payload: Substring) -> [Entry] {
      var entries: [Entry] = []
      var previousIsEntry = false
      for line in payload.utf8.split(separator: UInt8(ascii: "\n")) {
        if line.first == UInt8(ascii: "=") {
          if previousIsEntry, let last = entries.indices.last, !entries[last].isHash {
            entries[last].row = Row(line)
          }
          previousIsEntry = false
        } else if let entry = Entry(line) {
          entries.append(entry)
          previousIsEntry = true
        } else {
          previousIsEntry = false
        }
      }
      return entries
    }
  }

  /// The format of a payload, named by its first line: `pld-notify/2` and the entries this store writes
  /// (one per line, ``Entry``, each optionally followed by the line of its row). A payload without that
  /// line is of format 1: the same entries, as the releases before the marker sent them, and read the
  /// same way. Lines a listener does not know are skipped, so a new kind of line that older listeners
  /// may ignore (as rows are) keeps the format's number; a listener that meets a format newer than it
  /// knows cannot tell which keys it names: it reads nothing of it and catches up at once
  /// (``SharedListener``), rather than at its next periodic catch-up. Older listeners skip the first line
  /// as a malformed entry and read the rest.
  ///
  /// ```swift
  /// switch SharedNotification.Format.read(payload) {
  /// case .entries(let entries): for entry in entries { … }
  /// case .unknown(let format): catchUpNow()
  /// }
  /// ```
  enum Format {
    /// The format this store writes.
    static let current = 2
    /// What the first line of a payload starts with, before the format's number.
    static let prefix = "pld-notify/"
    /// The first line of every payload this store writes.
    static let marker = "\(prefix)\(current)"

    /// What a payload holds, for this store.
    enum Contents {
      case entries([Entry])
      /// A format newer than this store knows (or a marker without a number): its format line.
      case unknown(String)
    }

    /// Reads `payload`: format 1 (no marker) and ``current`` give their entries, another format nothing.
    /// On every payload of every replica: the entries are read in place, without copying the payload.
    static func read(_ payload: String) -> Contents {
      let bytes = payload.utf8
      guard bytes.starts(with: prefix.utf8) else { return .entries(Entry.all(in: Substring(payload))) }
      let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
      guard bytes[..<lineEnd].elementsEqual(marker.utf8) else {
        return .unknown(String(Substring(bytes[..<lineEnd])))
      }
      return .entries(Entry.all(in: Substring(bytes[lineEnd...])))
    }
  }
}
