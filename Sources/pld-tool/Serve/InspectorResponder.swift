import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PersistentLiveData

/// Answers every request of `pld-tool serve`: the checks first (`Host`: 421, token: 401, a write
/// without `--allow-writes`: 403), then the page and the JSON API.
///
/// | request | answer |
/// |---|---|
/// | `GET /` | the page |
/// | `GET /api/keys?limit=N&prefix=P` | every key's summary (or the first N; with `prefix`, the keys that start with P, by bytes: a collection's `NAME/`), with the id of the newest event it includes (`PLD-Event-Id`) |
/// | `GET /api/keys/KEY/history?limit=N` | the key's newest N versions (KEY percent-encoded), `ETag: "LATEST"` |
/// | `GET /api/events` | Server-Sent Events (``ServerSentEvents``) |
/// | `GET /api/replicas` | a shared store's running replicas, each with the migrations that strand it (`[]` for a file) |
/// | `POST /api/keys/KEY/rollback` `{"version": N}` | with `--allow-writes` only: a rollback; with `If-Match: "V"`, only while the key is at V (else 412) |
struct InspectorResponder: HTTPResponder {
  typealias Context = BasicRequestContext

  let security: InspectorSecurity
  let source: any InspectorSource
  let feed: VersionFeed
  let allowWrites: Bool
  /// Where an unexpected failure's detail goes (standard error): the page gets a generic message.
  let console: Console

  /// The most versions one history request returns.
  static let maximumLimit = 10_000

  func respond(to request: Request, context: Context) async throws -> Response {
    guard security.isAllowedHost(request.head.authority) else {
      return Self.text(.init(code: 421, reasonPhrase: "Misdirected Request"), "Misdirected Request\n")
    }
    let (path, query) = Self.split(request.head.path ?? "/")
    let queryToken = query["token"]
    let presented = security.isToken(queryToken)
    guard presented || security.isToken(security.cookieToken(request.headers[.cookie])) else {
      return Self.text(.unauthorized, "Unauthorized\n")
    }
    var response = await route(request, path: path, query: query)
    if presented { response.headers[.setCookie] = security.setCookie }
    return response
  }

  private func route(_ request: Request, path: [Substring], query: [String: String]) async -> Response {
    let isRead = request.method == .get || request.method == .head
    do {
      switch (isRead, path.count, path.first, path.dropFirst().first) {
      case (true, 0, _, _):
        return Self.page(allowsWrites: allowWrites, store: source.storeName, limitation: source.limitation)
      case (true, 2, "api", "keys"):
        let limit = query["limit"].flatMap { Int($0) }.map { max($0, 0) }
        let (keys, lastID) = feed.snapshotJSON(limit: limit, prefix: query["prefix"])
        var response = Self.body(keys, type: "application/json; charset=utf-8")
        if let name = HTTPField.Name("PLD-Event-Id") { response.headers[name] = "\(lastID)" }
        return response
      case (true, 2, "api", "replicas"):
        return Self.json(try await source.replicasJSON())
      case (true, 2, "api", "events"):
        let lastID = HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] }.flatMap { Int64($0) }
        return ServerSentEvents.response(feed: feed, after: lastID ?? query["after"].flatMap { Int64($0) })
      case (true, 4, "api", "keys") where path[3] == "history":
        let key = try Self.key(path[2])
        let limit = min(max(Int(query["limit"] ?? "") ?? 50, 1), Self.maximumLimit)
        let (history, latest) = try await source.historyJSON(key: key, limit: limit)
        var response = Self.json(history)
        response.headers[.eTag] = "\"\(latest)\""
        return response
      case (false, 4, "api", "keys") where path[3] == "rollback" && request.method == .post:
        guard allowWrites, security.isAllowedOrigin(request.headers[.origin]) else { return Self.forbidden() }
        return try await rollback(request, key: try Self.key(path[2]))
      case (false, _, _, _):
        return Self.forbidden()
      default:
        return Self.failure(InspectorFailure(status: 404, message: "Not found."))
      }
    } catch let failure as InspectorFailure {
      return Self.failure(failure)
    } catch let conflict as VersionConflict {
      // The key moved on since the version the client showed (If-Match): 412, with the current version.
      return Self.json(
        .object([.init("error", .string(conflict.description)), .init("version", .integer(conflict.actual))]),
        status: .preconditionFailed)
    } catch {
      // The detail (paths, the server's words) is for whoever runs the inspector, not for the page.
      console.writeError(
        "pld-tool serve: \(request.method) /\(path.joined(separator: "/")) failed: \(TerminalText.escaped("\(error)"))\n"
      )
      return Self.failure(
        InspectorFailure(
          status: 500, message: "The inspector could not answer; what went wrong is on its standard error."))
    }
  }

  private func rollback(_ request: Request, key: String) async throws -> Response {
    let body = try await request.body.collect(upTo: 4_096)
    let text = String(buffer: body)
    guard case .object(let members)? = try? JSONParser.parse(text),
      let number = members.first(where: { $0.key == "version" }), case .number(let digits) = number.value,
      let version = Int64(digits), version >= 1
    else {
      throw InspectorFailure(status: 400, message: #"Expected {"version": N} with N at least 1."#)
    }
    let written = try await source.rollback(
      key: key, to: version, ifVersion: try Self.expectedVersion(request.headers[.ifMatch]))
    return Self.json(
      .object([
        .init("key", .string(key)), .init("version", .integer(written)),
        .init("restoredVersion", .integer(version)),
      ]))
  }

  // MARK: - Requests

  /// The path's segments (still percent-encoded) and the query's parameters (decoded).
  static func split(_ target: String) -> ([Substring], [String: String]) {
    let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let segments = parts[0].split(separator: "/", omittingEmptySubsequences: true)
    var query: [String: String] = [:]
    if parts.count > 1 {
      for pair in parts[1].split(separator: "&") {
        let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let decode = { (text: Substring) in
          text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
        }
        let name = decode(nameAndValue[0])
        if query[name] == nil { query[name] = nameAndValue.count > 1 ? decode(nameAndValue[1]) : "" }
      }
    }
    return (segments, query)
  }

  /// The version an `If-Match` header names: `"N"` (or `W/"N"`, or several, of which the first counts);
  /// nil without the header or for `*` (any version).
  static func expectedVersion(_ ifMatch: String?) throws -> Int64? {
    guard let ifMatch else { return nil }
    let first = ifMatch.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    if first == "*" { return nil }
    let tag = first.hasPrefix("W/") ? String(first.dropFirst(2)) : first
    guard tag.count >= 3, tag.hasPrefix("\""), tag.hasSuffix("\""),
      let version = Int64(tag.dropFirst().dropLast()),
      version >= 0
    else {
      throw InspectorFailure(
        status: 400, message: #"If-Match must name a version: "N", as the history's ETag."#)
    }
    return version
  }

  /// A percent-encoded key of a path.
  static func key(_ segment: Substring) throws -> String {
    guard let key = String(segment).removingPercentEncoding else {
      throw InspectorFailure(status: 400, message: "The key is not percent-encoded UTF-8.")
    }
    return key
  }

  // MARK: - Answers

  static func page(allowsWrites: Bool, store: String, limitation: String?) -> Response {
    let nonce = InspectorSecurity.randomToken().prefix(32)
    var response = body(
      InspectorPage.html(
        nonce: String(nonce), allowsWrites: allowsWrites, store: store, limitation: limitation),
      type: "text/html; charset=utf-8")
    response.headers[.contentSecurityPolicy] = InspectorSecurity.pagePolicy(nonce: String(nonce))
    return response
  }

  static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    body(value.compact, type: "application/json; charset=utf-8", status: status)
  }

  static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
    body(text, type: "text/plain; charset=utf-8", status: status)
  }

  static func forbidden() -> Response {
    failure(
      InspectorFailure(
        status: 403,
        message: "Forbidden: this inspector is read-only (start it with --allow-writes to allow rollbacks)."))
  }

  static func failure(_ failure: InspectorFailure) -> Response {
    json(.object([.init("error", .string(failure.message))]), status: .init(code: failure.status))
  }

  static func body(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
    var headers = commonHeaders()
    headers[.contentType] = type
    return Response(
      status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }

  static func commonHeaders() -> HTTPFields {
    var headers = HTTPFields()
    for (name, value) in InspectorSecurity.commonHeaders {
      if let name = HTTPField.Name(name) { headers[name] = value }
    }
    return headers
  }
}
