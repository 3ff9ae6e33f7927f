import Foundation
import PLDTestSupport
import PersistentLiveData
import PersistentLiveDataPostgres
import PersistentLiveDataPostgresTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `pld-tool serve --postgres` on a shared store, run as a process against a real server: the
/// inspector reads the server's rows, never typed values, so that it lists, shows, follows and rolls
/// back keys of every value schema version — written before it starts and while it runs.
@Suite(.enabled(if: postgresAvailable, "no PostgreSQL server here"))
struct SharedInspectorTests {
  /// A value type at schema version 2, as an app that upgraded its type writes it.
  struct Flags: PersistentValue, Equatable {
    static let schemaVersion = 2
    var beta: Bool

    init(beta: Bool) { self.beta = beta }

    init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
      self.init(beta: false)
    }
  }

  @Test func itListsFollowsAndRollsBackKeysOfSchemaVersionTwoAndKeepsRunning() async throws {
    let tool = ChildProcess.product("pld-tool")
    try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built: \(tool)")
    let fixture = try await SharedFixture()
    let writer = fixture.replica()
    let flags = try await writer.store.liveData("flags", default: Flags(beta: false))
    try await flags.set(Flags(beta: true))
    let plain = try await writer.store.liveData("plain", default: 0)
    try await plain.set(1)

    let inspector = try InspectorProcess(tool, url: fixture.url, allowWrites: true)
    defer { inspector.stop() }
    let listed = try await inspector.keys()
    #expect(listed["flags"]?.version == 1 && listed["flags"]?.schemaVersion == 2, "\(listed)")
    #expect(listed["flags"]?.versions == 1)
    #expect(listed["plain"]?.schemaVersion == 1, "\(listed)")

    // Written while it runs: a new version of schema 2, a new key of schema 2, a removal.
    try await flags.set(Flags(beta: false))
    let later = try await writer.store.liveData("later", default: Flags(beta: false))
    try await later.set(Flags(beta: true))
    try await writer.store.removeKey("plain")
    #expect(
      try await eventually(.seconds(30)) {
        let keys = try await inspector.keys()
        return keys["flags"]?.version == 2 && keys["flags"]?.versions == 2
          && keys["later"]?.schemaVersion == 2
          && keys["plain"] == nil
      })

    let history = try await inspector.history("flags")
    #expect(history.map(\.version) == [2, 1] && history.allSatisfy { $0.schemaVersion == 2 }, "\(history)")
    #expect(history.last?.value == ["beta": true] as NSDictionary)

    // A rollback writes the old row as it is: schema version 2, read back by the type that wrote it.
    let (status, _) = try await inspector.rollback("flags", to: 1, ifMatch: 2)
    #expect(status == 200)
    #expect(await eventually(.seconds(30)) { flags.version == 3 && flags.value == Flags(beta: true) })
    let rolledBack = try await inspector.history("flags")
    #expect(rolledBack.first?.version == 3 && rolledBack.first?.schemaVersion == 2, "\(rolledBack)")
    // A rollback from a page that showed version 2 is refused now that the key is at 3.
    #expect(try await inspector.rollback("flags", to: 2, ifMatch: 2).status == 412)
    #expect(try await inspector.keys()["flags"]?.version == 3, "still serving after all of it")
    await writer.shutDown()
  }
}

extension SharedInspectorTests {
  @Test func anAnswerThatFailsGivesTheDetailToStandardErrorNotToThePage() async throws {
    let tool = ChildProcess.product("pld-tool")
    try #require(FileManager.default.isExecutableFile(atPath: tool), "pld-tool is built: \(tool)")
    let fixture = try await SharedFixture()
    let writer = fixture.replica()
    try await writer.store.liveData("flags", default: 0).set(1)
    await writer.shutDown()
    let inspector = try InspectorProcess(tool, url: fixture.url, allowWrites: false)
    defer { inspector.stop() }
    #expect(try await inspector.keys()["flags"]?.version == 1)
    // The database goes away under it: every read fails from now on.
    try await fixture.server.psql(
      "DROP DATABASE \"\(fixture.database)\" WITH (FORCE)", database: "postgres")
    let (status, body) = try await inspector.get("/api/keys/flags/history")
    #expect(status == 500)
    #expect(body.contains("on its standard error") && !body.contains(fixture.database), "\(body)")
    let said = inspector.child.standardError
    #expect(said.contains("/api/keys/flags/history failed"), "\(said)")
  }
}

extension SharedFixture {
  /// The fixture's database as a `postgres://` URL, as `pld-tool --postgres` takes it.
  var url: String {
    switch server.endpoint {
    case .socket(let path):
      let socket = URL(fileURLWithPath: path)
      let port = socket.pathExtension
      return
        "postgres://\(server.username)@/\(database)?host=\(socket.deletingLastPathComponent().path)&port=\(port)"
    case .host(let host, let port):
      let password = server.password.map { ":\($0)" } ?? ""
      return "postgres://\(server.username)\(password)@\(host):\(port)/\(database)"
    }
  }
}

/// A `pld-tool serve` process and the address it printed.
struct InspectorProcess {
  struct Summary: Decodable {
    var key: String
    var version: Int64
    var schemaVersion: Int?
    var versions: Int?
  }

  struct Entry {
    var version: Int64
    var schemaVersion: Int?
    var value: NSDictionary?
  }

  let child: ChildProcess
  let base: String
  let token: String

  init(_ tool: String, url: String, allowWrites: Bool) throws {
    child = try ChildProcess(tool, ["serve", "--postgres", url] + (allowWrites ? ["--allow-writes"] : []))
    guard let line = child.readLine(), let marker = line.range(of: "/?token=") else {
      child.kill(SIGKILL)
      throw TestSupportFailure("pld-tool serve printed no address: \(child.standardError)")
    }
    base = String(line[..<marker.lowerBound])
    token = String(line[marker.upperBound...])
  }

  func stop() {
    child.kill(SIGTERM)
    child.wait()
  }

  func keys() async throws -> [String: Summary] {
    let (data, _) = try await request("GET", "/api/keys")
    let summaries = try JSONDecoder().decode([Summary].self, from: data)
    return Dictionary(summaries.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
  }

  func history(_ key: String) async throws -> [Entry] {
    let (data, _) = try await request("GET", "/api/keys/\(key)/history")
    let array = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
    return array.map {
      Entry(
        version: ($0["version"] as? NSNumber)?.int64Value ?? 0,
        schemaVersion: ($0["schemaVersion"] as? NSNumber)?.intValue,
        value: $0["value"] as? NSDictionary)
    }
  }

  /// `GET path`: the status and the body's text.
  func get(_ path: String) async throws -> (status: Int, body: String) {
    let (data, status) = try await request("GET", path)
    return (status, String(decoding: data, as: UTF8.self))
  }

  func rollback(_ key: String, to version: Int64, ifMatch: Int64) async throws -> (status: Int, body: String)
  {
    let (data, status) = try await request(
      "POST", "/api/keys/\(key)/rollback", body: #"{"version": \#(version)}"#, ifMatch: ifMatch)
    return (status, String(decoding: data, as: UTF8.self))
  }

  private func request(
    _ method: String, _ path: String, body: String? = nil, ifMatch: Int64? = nil
  ) async throws -> (Data, Int) {
    guard let url = URL(string: base + path + "?token=" + token) else {
      throw TestSupportFailure("bad URL \(path)")
    }
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.httpBody = body.map { Data($0.utf8) }
    if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
    if let ifMatch { request.setValue("\"\(ifMatch)\"", forHTTPHeaderField: "If-Match") }
    let (data, response) = try await URLSession.shared.data(for: request)
    return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
  }
}
