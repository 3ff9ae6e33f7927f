import Foundation
import PLDTestSupport
import PersistentLiveDataPostgresTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The shared-store example of the README: `pld-flags` serves feature flags from PostgreSQL and, with
/// swift-prometheus bootstrapped, its store's metrics on `/metrics` — what `curl localhost:PORT/metrics`
/// shows an operator.
@Suite(
  .sharedStoreSlot,
  .enabled(if: postgresAvailable, "no PostgreSQL server here (install postgresql or set PLD_POSTGRES_URL)"))
struct FlagsExampleTests {
  @Test func twoReplicasServeTheSameFlagsAndTheirMetricsInPrometheusFormat() async throws {
    let fixture = try await SharedFixture()
    let first = try await Self.start(fixture)
    // The README's form: the socket's directory, as psql takes it.
    let second = try await Self.start(fixture, socketDirectory: true)
    // A test that throws leaves them killed (reaped when the process objects go); one that returns stops
    // them below, waiting on threads of their own.
    var stopped = false
    defer { if !stopped { for replica in [first, second] { replica.process.kill(SIGKILL) } } }

    // The second replica serves the flags before they change: it then learns of the change from the first.
    #expect(try await HTTP.request("GET", "/flags", port: second.port).body == "{}")
    let turnedOn = try await HTTP.request("POST", "/flags/new-checkout/on", port: first.port)
    #expect(turnedOn.status == 204, "\(turnedOn.body)")
    let servedBySecond = await eventually {
      (try? await HTTP.request("GET", "/flags", port: second.port).body) == #"{"new-checkout":true}"#
    }
    #expect(servedBySecond, "the other replica serves the flag")

    let metrics = try await HTTP.request("GET", "/metrics", port: first.port)
    #expect(metrics.status == 200)
    let lines = metrics.body.split(separator: "\n").map(String.init)
    #expect(lines.contains("# TYPE pld_write_duration histogram"), "\(metrics.body)")
    #expect(
      lines.contains {
        $0.hasPrefix("pld_write_duration_count{") && $0.contains(#"backend="postgresql""#)
          && $0.contains(#"operation="update""#) && $0.hasSuffix(" 1")
      },
      "one update timed: \(metrics.body)")
    #expect(
      lines.contains("pld_postgres_reachable 1.0") || lines.contains("pld_postgres_reachable 1"),
      "\(metrics.body)")
    let received = try await HTTP.request("GET", "/metrics", port: second.port).body
    #expect(
      received.split(separator: "\n").contains {
        $0.hasPrefix(#"pld_versions_received{backend="postgresql"}"#) && $0.hasSuffix(" 1")
      },
      "the second replica received the version: \(received)")
    for replica in [first, second] { replica.process.kill(SIGTERM) }
    for replica in [first, second] { await replica.process.waitOffPool() }
    stopped = true
  }

  /// A running `pld-flags` on the fixture's database, on a free port.
  struct Running {
    let process: ChildProcess
    let port: Int
  }

  static func start(
    _ fixture: SharedFixture, socketDirectory: Bool = false, environment extra: [String: String] = [:]
  ) async throws -> Running {
    let endpoint: String
    switch fixture.server.endpoint {
    case .socket(let path):
      endpoint = socketDirectory ? URL(fileURLWithPath: path).deletingLastPathComponent().path : path
    case .host(let host, let port): endpoint = "\(host):\(port)"
    }
    var environment: [String: String] = [:]
    if let password = fixture.server.password { environment["PLD_FLAGS_PASSWORD"] = password }
    environment.merge(extra) { _, new in new }
    let process = try ChildProcess(
      ChildProcess.product("pld-flags"),
      [endpoint, fixture.server.username, fixture.database, "0"], environment: environment)
    // Read on a thread of its own: the example prints this line once it serves (or ends), which takes
    // seconds under a sanitizer on a loaded machine.
    while let line = await process.readLineOffPool() {
      if line.hasPrefix("listening on 127.0.0.1:"), let port = Int(line.split(separator: ":").last ?? "") {
        return Running(process: process, port: port)
      }
    }
    await process.waitOffPool()
    throw ExampleError("pld-flags did not start: \(process.standardError)")
  }
}

/// A failure of the example or of its HTTP exchange, with what was seen.
struct ExampleError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// A minimal HTTP/1.1 client on a socket (one request per connection), so the test needs no HTTP library.
enum HTTP {
  struct Response: Sendable {
    var status: Int
    var body: String
  }

  static func request(_ method: String, _ path: String, port: Int) async throws -> Response {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        continuation.resume(with: Result { try blockingRequest(method, path, port: port) })
      }
    }
  }

  static func blockingRequest(_ method: String, _ path: String, port: Int) throws -> Response {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ExampleError("socket: \(errno)") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw ExampleError("connect to port \(port): \(errno)") }
    let request = Array(
      "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
    guard send(fd, request, request.count, 0) == request.count else { throw ExampleError("send: \(errno)") }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = recv(fd, &chunk, chunk.count, 0)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let headerEnd = text.range(of: "\r\n\r\n"),
      let status = Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "")
    else { throw ExampleError("not an HTTP response: \(text)") }
    let headers = text[..<headerEnd.lowerBound].lowercased()
    var body = String(text[headerEnd.upperBound...])
    if headers.contains("transfer-encoding: chunked") { body = dechunked(body) }
    return Response(status: status, body: body)
  }

  /// The body of a chunked response (sizes in hexadecimal, each chunk followed by CRLF).
  static func dechunked(_ text: String) -> String {
    var rest = Substring(text)
    var body = ""
    while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16),
      size > 0
    {
      let start = lineEnd.upperBound
      let utf8 = rest.utf8
      guard let end = utf8.index(start, offsetBy: size, limitedBy: utf8.endIndex) else { break }
      body += String(rest[start..<end])
      rest = rest[end...].dropFirst(2)
    }
    return body
  }
}
