import Foundation
import PLDTestSupport
import PersistentLiveData
import PostgresNIO
import Testing

@testable import PersistentLiveDataPostgres

/// While a replica's writes come one at a time, each write's statement carries its notification: the
/// same payload, in the same format, as the notifier would have sent after the commit — made by the
/// server from the committed version and time — and exactly one per write.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct SharedInlineNotificationTests {
  struct Note: Codable, Sendable, Equatable {
    var text: String
  }

  /// A small value with an attribution (its row travels), a value over the carried limit (its entry
  /// only) and a key holding a newline (notified by its hash): each payload is the notifier's for that
  /// write, byte for byte, and there is one per write.
  @Test func aLoneWriteCarriesTheNotifiersPayloadForIt() async throws {
    let fixture = try await SharedFixture()
    let eavesdropper = try await SharedNotificationTests.Eavesdropper(fixture)
    let a = fixture.replica(listening: false)
    let small = try await a.store.liveData("inline-small", default: Note(text: ""))
    let large = try await a.store.liveData("inline-large", default: Note(text: ""))
    let hashed = try await a.store.liveData("inline\nhashed", default: Note(text: ""))
    let attribution = WriteAttribution(author: "ops", reason: "inline test")
    // One at a time, not back to back (SharedNotifier.backToBack): each write's own notification.
    try await WriteAttribution.$current.withValue(attribution) { try await small.set(Note(text: "hi")) }
    try await Task.sleep(for: .milliseconds(2))
    try await large.set(Note(text: String(repeating: "x", count: 2_000)))
    try await Task.sleep(for: .milliseconds(2))
    try await hashed.set(Note(text: "h"))
    #expect(await eventually { eavesdropper.payloads.count == 3 })
    try await Task.sleep(for: .milliseconds(300))
    let payloads = eavesdropper.payloads.all
    #expect(payloads.count == 3, "one notification per write, none sent again after: \(payloads)")

    for (index, (data, row)) in [
      (
        small,
        SharedNotification.CarriedRow?.some(
          .init(
            schemaVersion: 1, writtenAtMilliseconds: 0, attribution: attribution, payload: #"{"text":"hi"}"#))
      ),
      (large, nil), (hashed, nil),
    ].enumerated() where index < payloads.count {
      let payload = payloads[index]
      // The replica's name is the second word of the entry line.
      let entryLine = payload.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
      let origin = entryLine.split(separator: " ").dropFirst().first.map(String.init) ?? ""
      let written = try await fixture.psql(
        "SELECT (extract(epoch FROM written_at) * 1000)::bigint FROM pld_values v JOIN pld_heads h "
          + "USING (key_hash) WHERE h.key = \(Self.literal(data.key)) AND v.version = 1")
      let carried = row.map {
        SharedNotification.CarriedRow(
          schemaVersion: $0.schemaVersion, writtenAtMilliseconds: Int64(written) ?? -1,
          attribution: $0.attribution, payload: $0.payload)
      }
      let expected = SharedNotification(
        key: data.key, keyHash: KeyHash.of(data.key), version: 1, origin: origin, row: carried)
      #expect(
        [payload] == SharedNotifier.payloads([expected.line(carryingRow: true)]),
        "\(data.key): the notifier's payload, byte for byte: \(payload)")
    }
    await a.shutDown()
    await eavesdropper.stop()
  }

  /// A role the server does not let notify: a lone write still commits (again without its
  /// notification), and the writes after it do not try again.
  @Test func aWriteWhoseNotificationTheServerRefusesStillCommits() async throws {
    let fixture = try await SharedFixture()
    let setup = fixture.replica(listening: false)
    _ = try await setup.store.liveData("refused", default: 0)
    await setup.shutDown()
    let role = try await fixture.roleWithTablePrivilegesOnly(canNotify: false)
    var configuration = fixture.configuration
    configuration.username = role
    let replica = Replica(configuration: configuration, options: PostgresStoreOptions(), listening: false)
    let data = try await replica.store.liveData("refused", default: 0)
    for value in 1...3 { try await data.set(value) }
    #expect(data.version == 3 && data.value == 3)
    #expect(try await fixture.psql("SELECT count(*) FROM pld_values") == "3", "each committed once")
    await replica.shutDown()
  }

  /// When a write may carry its notification: not while another does, not right after the last one
  /// (back to back, a burst from one task), not while the notifier has anything queued, sends or gathers,
  /// and never again once the server refused one for the notification's sake.
  @Test func aWriteCarriesItsNotificationOnlyOneAtATime() {
    let notifier = SharedNotifier(
      client: PostgresClient(
        configuration: .init(
          host: "localhost", username: "nobody", password: nil, database: nil, tls: .disable)),
      timeout: .seconds(5), logger: SharedSchema.quiet)
    let start = ContinuousClock.now
    #expect(notifier.claimInline(at: start), "the first write")
    #expect(!notifier.claimInline(at: start), "not while another is in flight")
    notifier.endInline(at: start + .milliseconds(1))
    #expect(
      !notifier.claimInline(at: start + .milliseconds(1) + SharedNotifier.backToBack / 2), "not back to back")
    #expect(notifier.claimInline(at: start + .milliseconds(1) + SharedNotifier.backToBack), "one at a time")
    notifier.endInline(at: start + .milliseconds(2))
    notifier.inlineRefused("42501: permission denied for table pld_values")
    #expect(notifier.claimInline(at: start + .milliseconds(3)), "a refusal that is not the notification's")
    notifier.endInline(at: start + .milliseconds(3))
    notifier.inlineRefused("42501: permission denied for function pg_notify")
    #expect(!notifier.claimInline(at: start + .seconds(1)), "never again after the server refused one")
  }

  static func literal(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
  }
}
