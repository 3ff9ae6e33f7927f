import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `pld-tool serve` process and the address it printed.
final class ServeProcess {
  let process: ToolProcess
  let port: Int
  let token: String

  /// Starts `pld-tool serve arguments…` and reads the address from its first line.
  init(_ arguments: [String]) throws {
    process = try ToolProcess(["serve"] + arguments)
    guard let line = process.readLine(timeout: 60) else {
      process.send(SIGKILL)
      throw RawHTTP.Failure(description: "serve printed no address: \(process.result)")
    }
    let prefix = "http://127.0.0.1:"
    guard line.hasPrefix(prefix), let marker = line.range(of: "/?token=") else {
      throw RawHTTP.Failure(description: "unexpected first line \(line)")
    }
    port = Int(line[line.index(line.startIndex, offsetBy: prefix.count)..<marker.lowerBound]) ?? 0
    token = String(line[marker.upperBound...])
  }

  deinit {
    if process.exitStatus == nil {
      process.send(SIGKILL)
      process.wait(timeout: 5)
    }
  }

  /// `GET target` with the token in the query.
  func get(_ target: String, headers: [(String, String)] = []) throws -> RawHTTP.Response {
    let separator = target.contains("?") ? "&" : "?"
    return try RawHTTP.request(port: port, target: target + separator + "token=" + token, headers: headers)
  }

  /// A request with the token in the query.
  func request(
    _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = []
  ) throws -> RawHTTP.Response {
    try RawHTTP.request(
      port: port, method: method, target: target + "?token=" + token, headers: headers, body: body)
  }

  /// Sends `signal` and returns the exit status.
  func stop(_ signal: Int32 = SIGTERM) -> Int32? {
    process.send(signal)
    return process.wait(timeout: 10)
  }

  /// The percent-encoding of a key in a path, as `encodeURIComponent` makes it.
  static func encoded(_ key: String) -> String {
    let allowed = CharacterSet(
      charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")
    return key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
  }
}
