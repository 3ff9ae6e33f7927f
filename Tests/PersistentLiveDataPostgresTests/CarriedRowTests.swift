import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import PersistentLiveDataPostgres

/// A small committed row travels with its notification's entry, on the line after it, so that another
/// replica moves its live value without reading the row back: written and read back here, line by line.
@Suite struct CarriedRowTests {
  private static func notification(
    key: String = "flags", version: Int64 = 7, payload: String = #"{"on":true}"#, schemaVersion: Int = 2,
    attribution: WriteAttribution? = nil
  ) -> SharedNotification {
    SharedNotification(
      key: key, keyHash: KeyHash.of(key), version: version, origin: "5f3a",
      row: SharedNotification.CarriedRow(
        schemaVersion: schemaVersion, writtenAtMilliseconds: 1_764_460_800_123, attribution: attribution,
        payload: payload))
  }

  /// The entries of `lines` as a listener reads them from one payload.
  private static func read(_ lines: [String]) -> [SharedNotification.Entry] {
    let payloads = SharedNotifier.payloads(lines)
    #expect(payloads.count == 1)
    guard case .entries(let entries) = SharedNotification.Format.read(payloads[0]) else { return [] }
    return entries
  }

  /// Every attribution (none, an author, a reason with spaces, both, empty texts) and value (up to the
  /// limit, with spaces and non-ASCII text) comes back as the row the server holds.
  @Test func aCarriedRowIsReadBackAsTheCommittedRow() {
    let attributions: [WriteAttribution?] = [
      nil, WriteAttribution(author: "ops"), WriteAttribution(reason: "INC 42: café ☕︎"),
      WriteAttribution(author: "a b", reason: "c d"), WriteAttribution(author: "", reason: ""),
    ]
    let payloads = [
      "1", #"{"a":"x y","b":[1,2]}"#, #""é = 5""#,
      "\"" + String(repeating: "z", count: SharedNotification.carriedPayloadLimit - 2) + "\"",
    ]
    for attribution in attributions {
      for payload in payloads {
        let sent = Self.notification(payload: payload, attribution: attribution)
        let line = sent.line(carryingRow: true)
        #expect(line.contains("\n= "), "\(line)")
        let entries = Self.read([line, "8 5f3a k after"])
        #expect(entries.map(\.version) == [7, 8])
        let row = entries.first?.row?.stored(key: "flags", version: 7)
        #expect(
          row
            == StoredRow(
              key: "flags", version: 7, writtenAtMilliseconds: 1_764_460_800_123, payload: Data(payload.utf8),
              schemaVersion: 2, attribution: attribution))
        #expect(entries.last?.row == nil, "the next entry carries nothing")
      }
    }
  }

  /// A row travels only when the notifier asks, for a named key, with a value within the limit and no
  /// newline anywhere in it; else the entry goes alone and the listener reads the row.
  @Test func aRowThatCannotTravelLeavesTheEntryAlone() {
    let limit = SharedNotification.carriedPayloadLimit
    let cases: [(String, SharedNotification, Bool)] = [
      ("not asked", Self.notification(), false),
      ("too large", Self.notification(payload: "\"" + String(repeating: "z", count: limit - 1) + "\""), true),
      ("newline in the value", Self.notification(payload: "\"a\nb\""), true),
      ("newline in the author", Self.notification(attribution: WriteAttribution(author: "a\nb")), true),
      ("newline in the reason", Self.notification(attribution: WriteAttribution(reason: "a\nb")), true),
      ("a key named by its hash", Self.notification(key: "new\nline"), true),
      (
        "a long key: entry and row over a payload",
        Self.notification(
          key: String(repeating: "k", count: SharedDatabase.longestNotifiedKey),
          payload: "\"" + String(repeating: "z", count: 200) + "\""), true
      ),
    ]
    for (name, notification, asked) in cases {
      let line = notification.line(carryingRow: asked)
      #expect(line.utf8.count == notification.entry.utf8.count && !line.contains("\n= "), "\(name)")
    }
    let removal = SharedNotification(key: "flags", keyHash: KeyHash.of("flags"), version: 9, origin: "5f3a")
    #expect(removal.line(carryingRow: true) == removal.entry, "a removal has no row")
  }

  /// A malformed row line is skipped (the entry is kept, and read); a row line attaches only to the
  /// entry just above it; an older listener's reader skips row lines as entries of no known format.
  @Test func malformedOrStrayRowLinesAreSkipped() {
    let malformed = [
      "= x", "= 1 2 3", "= 0 1 -1 -1 p", "= 1 1 5 -1 ab", "= 1 1 -2 -1 p", "= 1 1 -1 -1",
      "= 1 99999999999999999999 -1 -1 p", "=1 1 -1 -1 p",
    ]
    for line in malformed {
      let entries = Self.read(["7 5f3a k flags", line])
      #expect(entries.count == 1 && entries[0].row == nil, "\(line)")
    }
    let stray = Self.read([
      "= 1 1 -1 -1 p", "7 5f3a k a", "garbage", "= 1 1 -1 -1 p", "8 5f3a h 0a1b", "= 1 1 -1 -1 p",
    ])
    #expect(stray.map(\.version) == [7, 8])
    #expect(stray.allSatisfy { $0.row == nil }, "after a bad line, after a hashed key, before any entry")
    let twice = Self.read(["7 5f3a k a", "= 1 1 -1 -1 p", "= 1 2 -1 -1 q"])
    #expect(twice.count == 1 && twice[0].row?.writtenAtMilliseconds == 1, "a second row line is skipped")
    #expect(SharedNotification.Entry(Substring("= 1 1 -1 -1 p").utf8) == nil, "an entry reader skips it")
  }

  /// Against a real server: a row that came with its notification moves the other replica's value and
  /// its observers (version, value, time and attribution as sent) without a read — the server holds no
  /// such version; a notification whose row line is malformed is read from the server instead.
  @Test(
    .sharedStoreSlot,
    .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
  func aCarriedRowIsAppliedWithoutAReadAndABadOneIsRead() async throws {
    let fixture = try await SharedFixture()
    var quiet = PostgresStoreOptions()
    quiet.catchUpInterval = .seconds(600)
    let a = fixture.replica()
    let b = fixture.replica(options: quiet)
    try await Listeners.expectListening([a, b], fixture, "the replicas listen")
    let onA = try await a.store.liveData("carried", default: 0)
    let onB = try await b.store.liveData("carried", default: 0)
    let seen = Recorder<Versioned<Int>>()
    let observer = await MainActor.run {
      onB.observeVersionedForever(receiveCurrent: false) { seen.append($0) }
    }

    try await WriteAttribution.$current.withValue(WriteAttribution(author: "ops", reason: "a b")) {
      try await onA.set(1)
    }
    #expect(await eventually { seen.all.last?.version == 1 }, "B heard A's write")
    #expect(seen.all.last?.attribution == WriteAttribution(author: "ops", reason: "a b"))

    // A notification from a replica that is not there, carrying version 2 = 42: the server has no
    // version 2, so B can only have it from the notification.
    _ = try await fixture.psql(
      "SELECT pg_notify('\(SharedDatabase.channel)', E'pld-notify/2\\n2 0ther k carried\\n= 1 1764460800123 3 -1 ops42')"
    )
    #expect(await eventually { onB.version == 2 }, "the carried row moved B")
    #expect(onB.value == 42)
    #expect(await eventually { seen.all.last?.version == 2 }, "B's observer heard it")
    let carried = seen.all.last
    #expect(carried?.version == 2 && carried?.value == 42)
    #expect(carried?.attribution == WriteAttribution(author: "ops"))
    #expect(carried?.writtenAt == Date(timeIntervalSince1970: 1_764_460_800.123))

    // Version 3 committed on the server without a notification, then announced with a malformed row:
    // B reads it.
    try await fixture.psql(
      """
      WITH head AS (
        UPDATE pld_heads SET version = 3 WHERE key = 'carried' RETURNING key_hash, version)
      INSERT INTO pld_values (key_hash, version, payload, schema_version)
      SELECT key_hash, version, '7', 1 FROM head
      """)
    _ = try await fixture.psql(
      "SELECT pg_notify('\(SharedDatabase.channel)', E'pld-notify/2\\n3 0ther k carried\\n= 1 oops')")
    #expect(await eventually { onB.version == 3 }, "B read version 3")
    #expect(onB.value == 7)
    await MainActor.run { observer.cancel() }
    await a.shutDown()
    await b.shutDown()
  }
}
