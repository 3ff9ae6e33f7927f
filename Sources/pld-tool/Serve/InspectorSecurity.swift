import Foundation

/// The inspector's checks on every request: the `Host` header (against DNS rebinding) and the token
/// (in the `token` query parameter, then in the cookie the first answer sets).
///
/// ```swift
/// let security = InspectorSecurity(boundPort: .init(8080))
/// security.isAllowedHost("127.0.0.1:8080")  // true
/// security.isAllowedHost("evil.example:8080")  // false: 421
/// ```
struct InspectorSecurity: Sendable {
  /// Where the server listens, once it does.
  let boundPort: InspectorServer.BoundPort
  /// 32 random bytes from the system's generator, as 64 hexadecimal digits.
  let token: String

  init(boundPort: InspectorServer.BoundPort, token: String = InspectorSecurity.randomToken()) {
    self.boundPort = boundPort
    self.token = token
  }

  /// The server's port (0 before it listens).
  var port: Int { boundPort.port }

  /// 32 bytes from the system's random number generator, in hexadecimal.
  static func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<32).map { _ in
      let byte = UInt8.random(in: 0...255, using: &generator)
      return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }.joined()
  }

  /// The cookie's name: one per port, so that two inspectors on one machine do not share it.
  var cookieName: String { "pld-serve-\(port)" }

  /// The page's address, as `serve` prints it.
  var address: String { "http://127.0.0.1:\(port)/?token=\(token)" }

  /// Whether `host` (the `Host` header) names this server: `127.0.0.1:PORT` or `localhost:PORT`.
  func isAllowedHost(_ host: String?) -> Bool {
    guard let host = host?.lowercased() else { return false }
    return host == "127.0.0.1:\(port)" || host == "localhost:\(port)"
  }

  /// The `Set-Cookie` header of an answer to a request that brought the token in its query.
  var setCookie: String { "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

  /// Whether `candidate` is the token, compared in constant time.
  func isToken(_ candidate: String?) -> Bool {
    guard let candidate else { return false }
    let expected = Array(token.utf8)
    let given = Array(candidate.utf8)
    guard expected.count == given.count else { return false }
    var difference: UInt8 = 0
    for index in expected.indices { difference |= expected[index] ^ given[index] }
    return difference == 0
  }

  /// The token of the request's cookie header, if it has this inspector's cookie.
  func cookieToken(_ header: String?) -> String? {
    guard let header else { return nil }
    for part in header.split(separator: ";") {
      let pair = part.trimmingCharacters(in: .whitespaces)
      if pair.hasPrefix(cookieName + "=") { return String(pair.dropFirst(cookieName.count + 1)) }
    }
    return nil
  }

  /// Whether an `Origin` header, when there is one, is this server's.
  func isAllowedOrigin(_ origin: String?) -> Bool {
    guard let origin = origin?.lowercased() else { return true }
    return origin == "http://127.0.0.1:\(port)" || origin == "http://localhost:\(port)"
  }

  /// Headers of every answer: no caching, no framing, no sniffing, no referrer; the page's own policy is
  /// ``pagePolicy(nonce:)``.
  static let commonHeaders: [(String, String)] = [
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    (
      "Content-Security-Policy",
      "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
  ]

  /// The page's Content-Security-Policy: its one script and one style sheet by nonce, requests to this
  /// server only.
  static func pagePolicy(nonce: String) -> String {
    "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
      + "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  }
}
