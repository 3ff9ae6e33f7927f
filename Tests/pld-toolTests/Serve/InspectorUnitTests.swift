import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// The inspector's parts in process: the feed's resumption, the request checks, the URL of a shared store.
@Suite struct InspectorUnitTests {
  private func summary(_ key: String, _ version: Int64) -> KeySummary {
    KeySummary(
      key: key, version: version, writtenAtMilliseconds: 1_000 * version, schemaVersion: 1,
      versions: Int(version),
      retention: .null, attribution: nil)
  }

  private func event(_ key: String, _ version: Int64) -> VersionEvent {
    VersionEvent(
      key: key, version: version, writtenAtMilliseconds: 1_000 * version, summary: summary(key, version))
  }

  /// The items a new subscriber has been given so far.
  private func received(_ feed: VersionFeed, after id: Int64?) async -> [String] {
    let stream = feed.subscribe(after: id)
    feed.finishAll()
    var items: [String] = []
    for await item in stream {
      switch item {
      case .version(let id, let event): items.append("\(id) \(event.key)/\(event.version)")
      case .removed(let id, let key): items.append("\(id) removed \(key)")
      case .snapshot(let id, let json):
        items.append("\(id) snapshot \(json.components(separatedBy: "\"key\"").count - 1)")
      case .ping: items.append("ping")
      }
    }
    return items
  }

  @Test func aSubscriberResumesAfterItsLastEventOrGetsASnapshot() async {
    let feed = VersionFeed(keys: [summary("b", 1), summary("a", 2)])
    feed.publish([event("a", 3), event("c", 1)])
    feed.publish([], removed: ["b", "unknown"])
    #expect(await received(feed, after: nil) == ["3 snapshot 2"])
    #expect(await received(feed, after: 0) == ["1 a/3", "2 c/1", "3 removed b"])
    #expect(await received(feed, after: 2) == ["3 removed b"])
    #expect(await received(feed, after: 3) == [])
    #expect(await received(feed, after: 4) == ["3 snapshot 2"])
    #expect(await received(feed, after: -5) == ["3 snapshot 2"])
  }

  @Test func aSubscriberTooFarBehindGetsASnapshot() async {
    let feed = VersionFeed(keys: [])
    for version in 1...Int64(VersionFeed.keptEvents + 10) { feed.publish([event("k", version)]) }
    #expect(await received(feed, after: 5) == ["\(VersionFeed.keptEvents + 10) snapshot 1"])
    let recent = await received(feed, after: Int64(VersionFeed.keptEvents + 8))
    #expect(recent.count == 2)
  }

  @Test func theSnapshotListsKeysInByteOrderWithTheirLatestSummary() {
    let feed = VersionFeed(keys: [summary("é", 1), summary("z", 1), summary("A", 1)])
    feed.publish([event("b", 1), event("z", 2)])
    let (json, lastID) = feed.snapshotJSON()
    #expect(lastID == 2)
    let keys = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [[String: Any]]
    #expect(keys?.map { "\($0["key"] ?? "")/\($0["version"] ?? "")" } == ["A/1", "b/1", "z/2", "é/1"])
    #expect(feed.snapshotJSON(limit: 2).json.components(separatedBy: "\"key\"").count - 1 == 2)
  }

  /// `GET /api/keys?prefix=todo/`: a collection's members, by bytes, and nothing around them.
  @Test func aPrefixSelectsTheKeysThatStartWithItByBytes() {
    let keys = [
      "todo", "todo/a", "todo/b/c", "todo0", "todox", "tod", "todo/caf\u{E9}", "todo/cafe\u{301}", "z",
    ]
    let feed = VersionFeed(keys: keys.map { summary($0, 1) })
    func selected(_ prefix: String?, limit: Int? = nil) -> [String] {
      let json = feed.snapshotJSON(limit: limit, prefix: prefix).json
      let rows = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [[String: Any]]
      return rows?.compactMap { $0["key"] as? String } ?? []
    }
    #expect(selected("todo/") == ["todo/a", "todo/b/c", "todo/cafe\u{301}", "todo/caf\u{E9}"])
    #expect(selected("todo/", limit: 1) == ["todo/a"])
    #expect(
      selected("todo") == [
        "todo", "todo/a", "todo/b/c", "todo/cafe\u{301}", "todo/caf\u{E9}", "todo0", "todox",
      ])
    #expect(selected("nothing").isEmpty && selected("zz").isEmpty)
    #expect(selected("").count == keys.count && selected(nil).count == keys.count)
  }

  @Test func keysWithCanonicallyEquivalentSpellingsAreTwoKeys() {
    let feed = VersionFeed(keys: [summary("caf\u{E9}", 1), summary("cafe\u{301}", 4)])
    #expect(feed.versions().count == 2)
    #expect(feed.summary(of: "cafe\u{301}")?.version == 4)
  }

  @Test func theInspectorNamesOnlyTheKeysThatChangedAndLeavesTheFileAlone() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let inspector = try StoreInspector(path: path)
    defer { inspector.close() }
    let first = try inspector.latestVersionChanges()
    #expect(first.changed.map { "\($0.key)/\($0.latest)" } == ["counter/5", "settings/3", "theme/1"])
    let none = try inspector.latestVersionChanges()
    #expect(none.changed.isEmpty && none.removed.isEmpty)
    let before = directory.snapshot("app.db")
    let store = try PersistentStore(path: path)
    try store.liveData("theme", default: "").set("paper")
    try store.liveData("caf\u{E9}", default: 0).set(1)
    try store.removeKey("counter")
    try store.close()
    let next = try inspector.latestVersionChanges()
    #expect(next.changed.map { "\($0.key)/\($0.latest)" } == ["caf\u{E9}/1", "theme/2"])
    #expect(next.removed == ["counter"])
    let written = directory.snapshot("app.db")
    #expect(written != before)
    try inspector.forgetLatestVersions()
    #expect(try inspector.latestVersionChanges().changed.count == 3)
    #expect(directory.snapshot("app.db") == written)
  }

  @Test func theHostMustNameThisServer() {
    let security = InspectorSecurity(boundPort: .init(8123))
    #expect(security.isAllowedHost("127.0.0.1:8123"))
    #expect(security.isAllowedHost("localhost:8123"))
    #expect(security.isAllowedHost("LocalHost:8123"))
    for host in [
      nil, "", "127.0.0.1", "localhost", "127.0.0.1:812", "127.0.0.1:81234", "[::1]:8123", "0.0.0.0:8123",
      "evil.example:8123", "localhost.evil.example:8123", "127.0.0.1:8123.evil",
    ] {
      #expect(!security.isAllowedHost(host), "\(host ?? "nil")")
    }
    #expect(security.isAllowedOrigin(nil))
    #expect(security.isAllowedOrigin("http://localhost:8123"))
    #expect(!security.isAllowedOrigin("null"))
    #expect(!security.isAllowedOrigin("http://127.0.0.1:8124"))
  }

  @Test func theTokenIsRandomAndComparedWhole() {
    let security = InspectorSecurity(boundPort: .init(8123))
    #expect(security.token.count == 64)
    #expect(InspectorSecurity.randomToken() != InspectorSecurity.randomToken())
    #expect(security.isToken(security.token))
    #expect(!security.isToken(nil))
    #expect(!security.isToken(""))
    #expect(!security.isToken(String(security.token.dropLast())))
    #expect(!security.isToken(security.token + "0"))
    #expect(!security.isToken(security.token.uppercased()) || security.token == security.token.uppercased())
    #expect(security.cookieToken("a=1; pld-serve-8123=abc; b=2") == "abc")
    #expect(security.cookieToken("pld-serve-81234=abc") == nil)
    #expect(security.cookieToken("xpld-serve-8123=abc") == nil)
  }

  @Test func requestTargetsAreSplitAndDecoded() throws {
    let (path, query) = InspectorResponder.split(
      "/api/keys/a%2Fb%20%C3%A9%3F%23/history?limit=5&token=x%2By&token=z")
    #expect(path == ["api", "keys", "a%2Fb%20%C3%A9%3F%23", "history"])
    #expect(try InspectorResponder.key(path[2]) == "a/b é?#")
    #expect(query == ["limit": "5", "token": "x+y"])
    #expect(throws: InspectorFailure.self) { try InspectorResponder.key("%ZZ") }
  }
}
