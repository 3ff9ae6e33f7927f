import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain HTTP/1.1 client over a TCP socket, so that tests can send any `Host` header, method and
/// cookie, and read a Server-Sent Events stream line by line.
///
/// ```swift
/// let response = try RawHTTP.request(port: port, target: "/api/keys?token=\(token)")
/// #expect(response.status == 200)
/// ```
final class RawHTTP {
  /// A complete answer.
  struct Response {
    var status: Int
    /// Header names in lower case.
    var headers: [(name: String, value: String)]
    var body: String

    func header(_ name: String) -> String? {
      headers.first { $0.name == name.lowercased() }?.value
    }

    /// The body as JSON.
    func json() throws -> Any {
      try JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])
    }
  }

  /// One Server-Sent Event.
  struct Event {
    var id: String?
    var name: String
    var data: String

    func json() throws -> Any {
      try JSONSerialization.jsonObject(with: Data(data.utf8), options: [.fragmentsAllowed])
    }
  }

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private let socket: Int32
  private var buffer: [UInt8] = []
  private var closed = false

  /// Connects to 127.0.0.1:`port`.
  init(port: Int) throws {
    socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw Failure(description: "socket: \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(socket)
      throw Failure(description: "connect to port \(port): \(errno)")
    }
  }

  deinit { close(socket) }

  /// Sends a request; `host` nil sends `127.0.0.1:PORT`.
  func send(
    method: String = "GET", target: String, host: String, headers: [(String, String)] = [],
    body: String? = nil,
    keepAlive: Bool = false
  ) {
    var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
    if !keepAlive { text += "Connection: close\r\n" }
    text += "\r\n" + (body ?? "")
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
      if written <= 0 { return }
      offset += written
    }
  }

  /// One request on a new connection, and its whole answer.
  static func request(
    port: Int, method: String = "GET", target: String, host: String? = nil, headers: [(String, String)] = [],
    body: String? = nil, timeout: TimeInterval = 10
  ) throws -> Response {
    let connection = try RawHTTP(port: port)
    connection.send(
      method: method, target: target, host: host ?? "127.0.0.1:\(port)", headers: headers, body: body)
    let (status, headers) = try connection.readHead(timeout: timeout)
    let body: [UInt8]
    if let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }) {
      body = try connection.readBytes(length, timeout: timeout)
    } else if headers.contains(where: { $0.name == "transfer-encoding" && $0.value.contains("chunked") }) {
      body = try connection.readChunked(timeout: timeout)
    } else {
      body = try connection.readToEnd(timeout: timeout)
    }
    return Response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
  }

  /// Opens `GET /api/events` and reads its head; then ``nextEvent(timeout:)``.
  static func events(
    port: Int, token: String, lastEventID: String? = nil, after: Int64? = nil
  ) throws -> RawHTTP {
    let connection = try RawHTTP(port: port)
    var headers: [(String, String)] = [("Accept", "text/event-stream")]
    if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
    let query = after.map { "&after=\($0)" } ?? ""
    connection.send(
      target: "/api/events?token=\(token)\(query)", host: "127.0.0.1:\(port)", headers: headers,
      keepAlive: true)
    let (status, responseHeaders) = try connection.readHead(timeout: 10)
    guard status == 200 else { throw Failure(description: "GET /api/events: status \(status)") }
    connection.chunked = responseHeaders.contains {
      $0.name == "transfer-encoding" && $0.value.contains("chunked")
    }
    return connection
  }

  private var chunked = false
  private var decoded: [UInt8] = []

  /// The next event of an event stream (comments skipped), or nil after `timeout` seconds.
  func nextEvent(timeout: TimeInterval) throws -> Event? {
    let deadline = Date().addingTimeInterval(timeout)
    var id: String?
    var name = "message"
    var data: [String] = []
    while true {
      guard let line = try streamLine(deadline: deadline) else { return nil }
      if line.isEmpty {
        if !data.isEmpty { return Event(id: id, name: name, data: data.joined(separator: "\n")) }
        id = nil
        name = "message"
        continue
      }
      if line.hasPrefix(":") { continue }
      let field = line.prefix { $0 != ":" }
      var value = line.dropFirst(field.count).dropFirst()
      if value.first == " " { value = value.dropFirst() }
      switch field {
      case "id": id = String(value)
      case "event": name = String(value)
      case "data": data.append(String(value))
      default: break
      }
    }
  }

  /// A line of the (de-chunked) event stream.
  private func streamLine(deadline: Date) throws -> String? {
    while true {
      if let newline = decoded.firstIndex(of: 10) {
        let line = String(decoding: decoded[..<newline], as: UTF8.self)
        decoded.removeSubrange(...newline)
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
      }
      if chunked {
        guard let size = try line(deadline: deadline).flatMap({ Int($0, radix: 16) }) else { return nil }
        if size == 0 { return nil }
        decoded += try readBytes(size, timeout: deadline.timeIntervalSinceNow)
        _ = try line(deadline: deadline)
      } else {
        guard fill(deadline: deadline) else { return nil }
        decoded += buffer
        buffer.removeAll()
      }
    }
  }

  func readHead(timeout: TimeInterval) throws -> (Int, [(name: String, value: String)]) {
    let deadline = Date().addingTimeInterval(timeout)
    guard let statusLine = try line(deadline: deadline) else { throw Failure(description: "no status line") }
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else {
      throw Failure(description: "bad status line \(statusLine)")
    }
    var headers: [(name: String, value: String)] = []
    while let header = try line(deadline: deadline), !header.isEmpty {
      let name = header.prefix { $0 != ":" }
      let value = header.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
      headers.append((name.lowercased(), value))
    }
    return (status, headers)
  }

  private func line(deadline: Date) throws -> String? {
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        var line = buffer[..<newline]
        if line.last == 13 { line = line.dropLast() }
        let text = String(decoding: line, as: UTF8.self)
        buffer.removeSubrange(...newline)
        return text
      }
      guard fill(deadline: deadline) else { return nil }
    }
  }

  private func readBytes(_ count: Int, timeout: TimeInterval) throws -> [UInt8] {
    let deadline = Date().addingTimeInterval(timeout)
    while buffer.count < count {
      guard fill(deadline: deadline) else { throw Failure(description: "connection ended early") }
    }
    let bytes = Array(buffer[..<count])
    buffer.removeSubrange(..<count)
    return bytes
  }

  private func readChunked(timeout: TimeInterval) throws -> [UInt8] {
    let deadline = Date().addingTimeInterval(timeout)
    var body: [UInt8] = []
    while let sizeLine = try line(deadline: deadline), let size = Int(sizeLine, radix: 16), size > 0 {
      body += try readBytes(size, timeout: deadline.timeIntervalSinceNow)
      _ = try line(deadline: deadline)
    }
    return body
  }

  private func readToEnd(timeout: TimeInterval) throws -> [UInt8] {
    let deadline = Date().addingTimeInterval(timeout)
    while fill(deadline: deadline) {}
    defer { buffer.removeAll() }
    return buffer
  }

  /// Reads what arrives before `deadline`; false at the end of the stream or the deadline.
  private func fill(deadline: Date) -> Bool {
    guard !closed else { return false }
    let remaining = deadline.timeIntervalSinceNow
    guard remaining > 0 else { return false }
    var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    guard poll(&descriptor, 1, Int32(remaining * 1000) + 1) > 0 else { return false }
    var chunk = [UInt8](repeating: 0, count: 65_536)
    let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
    guard count > 0 else {
      closed = true
      return false
    }
    buffer += chunk[..<count]
    return true
  }
}
