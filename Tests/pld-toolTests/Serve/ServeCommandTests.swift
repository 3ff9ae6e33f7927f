import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `pld-tool serve` run as a real process, asked over real TCP connections.
@Suite(.ownThread, .serialized) struct ServeCommandTests {
  // MARK: - The address and the lifetime

  @Test func printsTheAddressFirstAndExitsWithZeroOnSigtermAndSigint() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    for signal in [SIGTERM, SIGINT] {
      let server = try ServeProcess([path])
      #expect(server.port > 0)
      #expect(server.token.count == 64)
      #expect(server.token.allSatisfy { $0.isHexDigit })
      #expect(try server.get("/api/keys").status == 200)
      #expect(server.stop(signal) == 0)
    }
  }

  @Test func eachRunHasItsOwnToken() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let first = try ServeProcess([path])
    let second = try ServeProcess([path])
    #expect(first.token != second.token)
    #expect(first.port != second.port)
    // The one's token does not open the other.
    let crossed = try RawHTTP.request(port: second.port, target: "/api/keys?token=\(first.token)")
    #expect(crossed.status == 401)
  }

  @Test func refusesAMissingFileWithAnError() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let result = try ToolProcess.run(["serve", directory.path("missing.db")])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: directory.path("missing.db")))
    let usage = try ToolProcess.run(["serve"])
    #expect(usage.status == 64)
  }

  // MARK: - Security

  @Test func everyRequestWithoutTheTokenGets401AndNothingElse() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let server = try ServeProcess([try directory.makeSampleStore()])
    let wrong = String(repeating: "0", count: 64)
    for target in [
      "/", "/api/keys", "/api/keys/settings/history", "/api/events", "/nothing", "/?token=\(wrong)",
      "/api/keys?token=\(server.token.prefix(63))",
    ] {
      let response = try RawHTTP.request(port: server.port, target: target)
      #expect(response.status == 401, "\(target)")
      #expect(response.body == "Unauthorized\n", "\(target)")
      #expect(response.header("set-cookie") == nil)
    }
    let write = try RawHTTP.request(
      port: server.port, method: "POST", target: "/api/keys/settings/rollback", body: #"{"version":1}"#)
    #expect(write.status == 401)
    // A cookie with another value does not open it either.
    let cookie = try RawHTTP.request(
      port: server.port, target: "/api/keys", headers: [("Cookie", "pld-serve-\(server.port)=\(wrong)")])
    #expect(cookie.status == 401)
  }

  @Test func theTokenSetsAStrictHttpOnlyCookieThatLaterRequestsUse() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let server = try ServeProcess([try directory.makeSampleStore()])
    let page = try server.get("/")
    #expect(page.status == 200)
    let cookie = try #require(page.header("set-cookie"))
    #expect(cookie.hasPrefix("pld-serve-\(server.port)=\(server.token);"))
    #expect(cookie.contains("HttpOnly"))
    #expect(cookie.contains("SameSite=Strict"))
    let nameAndValue = String(cookie.prefix { $0 != ";" })
    let keys = try RawHTTP.request(
      port: server.port, target: "/api/keys", headers: [("Cookie", "other=1; " + nameAndValue)])
    #expect(keys.status == 200)
    #expect(keys.header("set-cookie") == nil)
  }

  @Test func aHostHeaderOtherThanTheServersGets421() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let server = try ServeProcess([try directory.makeSampleStore()])
    let target = "/api/keys?token=\(server.token)"
    for host in [
      "evil.example:\(server.port)", "127.0.0.1:\(server.port + 1)", "127.0.0.1", "localhost",
      "127.0.0.2:\(server.port)", "evil.example",
    ] {
      let response = try RawHTTP.request(port: server.port, target: target, host: host)
      #expect(response.status == 421, "\(host)")
      #expect(!response.body.contains("settings"))
    }
    for host in ["127.0.0.1:\(server.port)", "localhost:\(server.port)", "LOCALHOST:\(server.port)"] {
      #expect(try RawHTTP.request(port: server.port, target: target, host: host).status == 200, "\(host)")
    }
  }

  @Test func answersCarrySecurityHeadersAndNoCORS() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let server = try ServeProcess([try directory.makeSampleStore()])
    let origin = [("Origin", "http://evil.example")]
    for response in [try server.get("/", headers: origin), try server.get("/api/keys", headers: origin)] {
      #expect(response.status == 200)
      #expect(response.header("access-control-allow-origin") == nil)
      #expect(response.header("access-control-allow-credentials") == nil)
      #expect(response.header("x-content-type-options") == "nosniff")
      #expect(response.header("x-frame-options") == "DENY")
      #expect(response.header("cache-control") == "no-store")
      let policy = try #require(response.header("content-security-policy"))
      #expect(policy.contains("default-src 'none'"))
      #expect(policy.contains("frame-ancestors 'none'"))
    }
    let preflight = try server.request("OPTIONS", "/api/keys", headers: origin)
    #expect(preflight.status == 403)
    #expect(preflight.header("access-control-allow-origin") == nil)
  }

  @Test func thePageIsSelfContainedWithItsScriptAllowedByNonce() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let server = try ServeProcess([try directory.makeSampleStore()])
    let page = try server.get("/")
    #expect(page.header("content-type") == "text/html; charset=utf-8")
    let policy = try #require(page.header("content-security-policy"))
    let nonce = try #require(policy.split(separator: "'").first { $0.hasPrefix("nonce-") }).dropFirst(6)
    #expect(policy.contains("script-src 'nonce-\(nonce)'"))
    #expect(page.body.contains("<script nonce=\"\(nonce)\">"))
    #expect(page.body.utf8.count <= 150_000)
    // Nothing loaded from elsewhere.
    #expect(!page.body.contains("http://"))
    #expect(!page.body.contains("https://"))
    #expect(!page.body.contains("innerHTML"))
    // A new nonce for every answer.
    let again = try server.get("/")
    #expect(again.header("content-security-policy") != policy)
  }

  // MARK: - Read-only

  @Test func withoutAllowWritesEveryWriteGets403AndTheFileStaysByteForByte() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    let server = try ServeProcess([path])
    let events = try RawHTTP.events(port: server.port, token: server.token)
    #expect(try events.nextEvent(timeout: 10)?.name == "snapshot")
    for (method, target) in [
      ("POST", "/api/keys/settings/rollback"), ("PUT", "/api/keys/settings"),
      ("DELETE", "/api/keys/settings"),
      ("PATCH", "/api/keys"), ("POST", "/"), ("POST", "/api/events"),
    ] {
      let response = try server.request(
        method, target, body: #"{"version":1}"#, headers: [("Content-Type", "application/json")])
      #expect(response.status == 403, "\(method) \(target)")
    }
    for target in ["/", "/api/keys", "/api/keys/settings/history?limit=2", "/api/keys/counter/history"] {
      #expect(try server.get(target).status == 200)
    }
    #expect(server.stop() == 0)
    #expect(directory.snapshot("app.db") == before)
    let history = try ToolProcess.run(["history", path, "settings", "--json"])
    #expect(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [Any] != nil)
    #expect(history.stdout.components(separatedBy: "\"version\"").count - 1 == 3)
  }

  @Test func liveUpdatesWriteNothingToTheFile() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path])
    let events = try RawHTTP.events(port: server.port, token: server.token)
    #expect(try events.nextEvent(timeout: 10)?.name == "snapshot")
    // Another process writes while the page is open.
    #expect(try ToolProcess.run(["set", path, "theme", #""paper""#]).status == 0)
    let event = try #require(try events.nextEvent(timeout: 10))
    #expect(event.name == "version")
    let written = directory.snapshot("app.db")
    for target in ["/", "/api/keys", "/api/keys/theme/history"] {
      #expect(try server.get(target).status == 200)
    }
    let again = try RawHTTP.events(port: server.port, token: server.token, lastEventID: event.id)
    #expect(try again.nextEvent(timeout: 0.5) == nil)
    #expect(server.stop() == 0)
    #expect(directory.snapshot("app.db") == written)
  }

  // MARK: - The JSON API

  @Test func listsEveryKeyWithItsVersionTimeSchemaRetentionAndAttribution() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    #expect(try ToolProcess.run(["prune", path, "counter", "--keep", "3"]).status == 0)
    let server = try ServeProcess([path])
    let response = try server.get("/api/keys")
    #expect(response.header("content-type") == "application/json; charset=utf-8")
    #expect(Int(response.header("pld-event-id") ?? "") == 0)
    let keys = try #require(try response.json() as? [[String: Any]])
    #expect(keys.map { $0["key"] as? String } == ["counter", "settings", "theme"])
    #expect(keys.map { $0["version"] as? Int } == [5, 3, 1])
    #expect(keys.map { $0["schemaVersion"] as? Int } == [1, 1, 1])
    let cli = try #require(
      try JSONSerialization.jsonObject(with: Data(ToolProcess.run(["keys", path, "--json"]).stdout.utf8))
        as? [[String: Any]])
    #expect(keys.map { $0["writtenAt"] as? String } == cli.map { $0["writtenAt"] as? String })
    #expect(keys.map { "\($0["retention"] ?? "")" } == cli.map { "\($0["retention"] ?? "")" })
    for key in keys {
      #expect(key["author"] is NSNull)
      #expect(key["reason"] is NSNull)
    }
  }

  /// `GET /api/keys?prefix=P` (percent-encoded): the keys that start with P, a collection's members.
  @Test func aPrefixListsOnlyTheKeysThatStartWithIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    do {
      let store = try PersistentStore(path: path)
      let todos = try store.collection("todo", of: String.self)
      try todos.set("milk", for: "milk")
      try todos.set("bread", for: "a b")
      try store.liveData("todox", default: "").set("not a member")
      try store.close()
    }
    let server = try ServeProcess([path])
    let keys = try #require(try server.get("/api/keys?prefix=todo%2F").json() as? [[String: Any]])
    #expect(keys.map { $0["key"] as? String } == ["todo/a b", "todo/milk"])
    let all = try #require(try server.get("/api/keys").json() as? [[String: Any]])
    #expect(all.count == 6)
  }

  @Test func showsWhoWroteEachVersionAndWhy() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let set = try ToolProcess.run([
      "set", path, "theme", #""ops""#, "--author", "ops <b>", "--reason", "INC-42 \"quoted\"",
    ])
    #expect(set.status == 0, "\(set.stderr)")
    let server = try ServeProcess([path])
    let keys = try #require(try server.get("/api/keys").json() as? [[String: Any]])
    let theme = try #require(keys.first { $0["key"] as? String == "theme" })
    #expect(theme["author"] as? String == "ops <b>")
    #expect(theme["reason"] as? String == "INC-42 \"quoted\"")
    let history = try #require(try server.get("/api/keys/theme/history").json() as? [[String: Any]])
    #expect(history.map { $0["author"] as? String } == ["ops <b>", nil])
    #expect(history.last?["author"] is NSNull)
  }

  @Test func historyGivesVersionsNewestFirstWithTheDiffOfPldToolDiff() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path])
    let history = try #require(
      try server.get("/api/keys/settings/history?limit=2").json() as? [[String: Any]])
    #expect(history.map { $0["version"] as? Int } == [3, 2])
    #expect(history.map { $0["diffFrom"] as? Int } == [2, 1])
    let value = try #require(history[0]["value"] as? [String: Any])
    #expect(value["fontSize"] as? Int == 14)
    #expect((history[0]["valueText"] as? String)?.contains("\n") == true)
    for (entry, (from, to)) in zip(history, [(2, 3), (1, 2)]) {
      let cli = try ToolProcess.run(["diff", path, "settings", "\(from)", "\(to)", "--json"])
      let expected = try #require(
        try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [[String: Any]])
      let diff = try #require(entry["diff"] as? [[String: Any]])
      #expect(
        diff.map { "\($0["path"] ?? "") \($0["change"] ?? "")" }
          == expected.map { "\($0["path"] ?? "") \($0["change"] ?? "")" })
      let lines = try ToolProcess.run(["diff", path, "settings", "\(from)", "\(to)"]).stdout.split(
        separator: "\n")
      #expect(diff.map { $0["line"] as? String } == lines.dropFirst().dropLast().map { String($0) })
    }
    let all = try #require(try server.get("/api/keys/settings/history").json() as? [[String: Any]])
    #expect(all.map { $0["version"] as? Int } == [3, 2, 1])
    #expect(all.last?["diffFrom"] is NSNull)
    let missing = try server.get("/api/keys/nope/history")
    #expect(missing.status == 404)
  }

  @Test func keysWithReservedCharactersAndMarkupComeBackAsData() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let hostile = ["a/b %c?d#e é \"q\" 'r'", "<script>alert(1)</script>", "+plus&amp;", "%2F", "line\nbreak"]
    let path = try directory.makeStore { store in
      for key in hostile { try store.liveData(key, default: "").set("<b>\(key)</b>") }
    }
    let server = try ServeProcess([path])
    let keys = try #require(try server.get("/api/keys").json() as? [[String: Any]])
    #expect(Set(keys.compactMap { $0["key"] as? String }) == Set(hostile))
    for key in hostile {
      let response = try server.get("/api/keys/\(ServeProcess.encoded(key))/history")
      #expect(response.status == 200, "\(key)")
      let history = try #require(try response.json() as? [[String: Any]])
      #expect(history.first?["key"] as? String == key)
      #expect(history.first?["value"] as? String == "<b>\(key)</b>")
    }
    #expect(!(try server.get("/").body.contains("alert(1)")))
  }

  // MARK: - Server-Sent Events

  @Test func sendsOneVersionEventPerCommittedVersionFromAnotherProcess() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path])
    let events = try RawHTTP.events(port: server.port, token: server.token)
    let snapshot = try #require(try events.nextEvent(timeout: 10))
    #expect(snapshot.name == "snapshot")
    #expect((try snapshot.json() as? [[String: Any]])?.count == 3)
    // One transaction of three versions (in this process, another connection), then a new key from
    // another process.
    let store = try PersistentStore(path: path)
    let counter = try store.liveData("counter", default: 0)
    try store.transaction {
      for value in 6...8 { try counter.set(value) }
    }
    try store.close()
    #expect(try ToolProcess.run(["set", path, "brand new", "[1]"]).status == 0)
    var received: [String] = []
    var ids: [Int] = []
    while received.count < 4, let event = try events.nextEvent(timeout: 10) {
      #expect(event.name == "version")
      let data = try #require(try event.json() as? [String: Any])
      received.append("\(data["key"] ?? "")/\(data["version"] ?? "")")
      #expect(data["writtenAt"] is String)
      ids.append(Int(event.id ?? "") ?? 0)
    }
    #expect(received == ["counter/6", "counter/7", "counter/8", "brand new/1"])
    #expect(ids == [1, 2, 3, 4])
    let keys = try #require(try server.get("/api/keys").json() as? [[String: Any]])
    #expect(keys.first { $0["key"] as? String == "counter" }?["version"] as? Int == 8)
  }

  @Test func aReconnectingClientGetsWhatItMissedOrASnapshot() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path])
    var events: RawHTTP? = try RawHTTP.events(port: server.port, token: server.token)
    _ = try events?.nextEvent(timeout: 10)
    #expect(try ToolProcess.run(["set", path, "theme", #""one""#]).status == 0)
    let first = try #require(try events?.nextEvent(timeout: 10))
    events = nil  // the connection drops
    #expect(try ToolProcess.run(["set", path, "theme", #""two""#]).status == 0)
    #expect(try ToolProcess.run(["delete", path, "counter"]).status == 0)
    #expect(
      waitUntil(timeout: 10) {
        ((try? server.get("/api/keys").json()) as? [[String: Any]])?.count == 2
      })
    // With the id of the last event received: the ones after it, in order.
    let resumed = try RawHTTP.events(port: server.port, token: server.token, lastEventID: first.id)
    let missed = try #require(try resumed.nextEvent(timeout: 10))
    #expect(missed.name == "version")
    #expect((try missed.json() as? [String: Any])?["version"] as? Int == 3)
    let removal = try #require(try resumed.nextEvent(timeout: 10))
    #expect(removal.name == "removed")
    #expect((try removal.json() as? [String: Any])?["key"] as? String == "counter")
    // With an unknown id: a snapshot of every key's latest version.
    let unknown = try RawHTTP.events(port: server.port, token: server.token, lastEventID: "999999")
    let snapshot = try #require(try unknown.nextEvent(timeout: 10))
    #expect(snapshot.name == "snapshot")
    let keys = try #require(try snapshot.json() as? [[String: Any]])
    #expect(keys.map { "\($0["key"] ?? "")/\($0["version"] ?? "")" } == ["settings/3", "theme/3"])
  }

  // MARK: - Writes

  @Test func allowWritesRollsBackThroughTheLibraryAndRefusesEverythingElse() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path, "--allow-writes"])
    let events = try RawHTTP.events(port: server.port, token: server.token)
    _ = try events.nextEvent(timeout: 10)
    let json = [("Content-Type", "application/json")]
    let response = try server.request(
      "POST", "/api/keys/settings/rollback", body: #"{"version": 1}"#, headers: json)
    #expect(response.status == 200)
    let body = try #require(try response.json() as? [String: Any])
    #expect(body["version"] as? Int == 4)
    #expect(body["restoredVersion"] as? Int == 1)
    let event = try #require(try events.nextEvent(timeout: 10))
    let eventData = try #require(try event.json() as? [String: Any])
    #expect(eventData["version"] as? Int == 4)
    #expect((eventData["summary"] as? [String: Any])?["author"] as? String == "pld-tool serve")
    let newest = try #require(
      (try server.get("/api/keys/settings/history?limit=1").json() as? [[String: Any]])?.first)
    #expect(newest["author"] as? String == "pld-tool serve")
    #expect(newest["reason"] is NSNull)
    let value = try ToolProcess.run(["get", path, "settings"]).stdout
    let first = try ToolProcess.run(["get", path, "settings", "--version", "1"]).stdout
    #expect(value == first)

    #expect(
      try server.request("POST", "/api/keys/settings/rollback", body: "{}", headers: json).status == 400)
    #expect(
      try server.request("POST", "/api/keys/settings/rollback", body: #"{"version": 99}"#, headers: json)
        .status == 404)
    #expect(
      try server.request("POST", "/api/keys/nope/rollback", body: #"{"version": 1}"#, headers: json).status
        == 404)
    #expect(try server.request("PUT", "/api/keys/settings", body: "1").status == 403)
    #expect(try server.request("DELETE", "/api/keys/settings").status == 403)
    let foreign = try server.request(
      "POST", "/api/keys/settings/rollback", body: #"{"version": 1}"#,
      headers: json + [("Origin", "http://evil.example")])
    #expect(foreign.status == 403)
    #expect(
      try ToolProcess.run(["history", path, "settings", "--json"]).stdout.components(
        separatedBy: "\"version\""
      ).count - 1 == 4)
  }

  // MARK: - Conditional rollbacks (If-Match)

  @Test func historyCarriesTheLatestVersionAsETagAndIfMatchRefusesAStaleRollbackWith412() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let server = try ServeProcess([path, "--allow-writes"])
    let history = try server.get("/api/keys/settings/history?limit=1")
    #expect(history.status == 200)
    #expect(history.header("ETag") == "\"3\"")

    // Another writer moves the key on: a rollback named against version 3 is refused.
    #expect(
      try ToolProcess.run(["set", path, "settings", #"{"theme":"x","fontSize":1,"tags":[]}"#]).status == 0)
    let json = [("Content-Type", "application/json")]
    let stale = try server.request(
      "POST", "/api/keys/settings/rollback", body: #"{"version": 1}"#, headers: json + [("If-Match", "\"3\"")]
    )
    #expect(stale.status == 412)
    let body = try #require(try stale.json() as? [String: Any])
    #expect(body["version"] as? Int == 4)
    #expect((body["error"] as? String)?.contains("version 4") == true)
    #expect(try server.get("/api/keys/settings/history?limit=1").header("ETag") == "\"4\"", "nothing written")

    let current = try server.request(
      "POST", "/api/keys/settings/rollback", body: #"{"version": 1}"#, headers: json + [("If-Match", "\"4\"")]
    )
    #expect(current.status == 200)
    #expect((try current.json() as? [String: Any])?["version"] as? Int == 5)
    let malformed = try server.request(
      "POST", "/api/keys/settings/rollback", body: #"{"version": 1}"#, headers: json + [("If-Match", "v5")])
    #expect(malformed.status == 400)
  }
}
