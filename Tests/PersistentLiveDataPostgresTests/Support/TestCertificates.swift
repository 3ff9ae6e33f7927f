import Foundation
import PLDTestSupport

/// Certificates a TLS test makes with `openssl`: a CA, a server certificate for `localhost` signed by it,
/// and a foreign CA that signed nothing the server holds.
///
/// ```swift
/// let certificates = try await TestCertificates.make()
/// defer { certificates.remove() }
/// // certificates.ca, certificates.serverCertificate, certificates.serverKey, certificates.foreignCA
/// ```
struct TestCertificates: Sendable {
  let folder: String
  var ca: String { folder + "/ca.crt" }
  var foreignCA: String { folder + "/foreign-ca.crt" }
  var serverCertificate: String { folder + "/server.crt" }
  var serverKey: String { folder + "/server.key" }

  static func make() async throws -> TestCertificates {
    let folder = NSTemporaryDirectory() + "pld-tls-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let certificates = TestCertificates(folder: folder)
    let days = ["-days", "2"]
    for name in ["ca", "foreign-ca"] {
      try await openssl(
        [
          "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/\(name).key", "-out",
          "\(folder)/\(name).crt", "-subj", "/CN=pld test \(name)",
        ] + days)
    }
    try await openssl(
      [
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", certificates.serverKey, "-out",
        "\(folder)/server.csr",
        "-subj", "/CN=localhost",
      ])
    try "subjectAltName=DNS:localhost\n".write(toFile: "\(folder)/san.ext", atomically: true, encoding: .utf8)
    try await openssl(
      [
        "x509", "-req", "-in", "\(folder)/server.csr", "-CA", certificates.ca, "-CAkey", "\(folder)/ca.key",
        "-CAcreateserial", "-out", certificates.serverCertificate, "-extfile", "\(folder)/san.ext",
      ] + days)
    return certificates
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: folder)
  }

  private static func openssl(_ arguments: [String]) async throws {
    let child = try ChildProcess("/usr/bin/openssl", arguments, mergingStandardError: true)
    let (lines, _) = await child.finish(within: .seconds(60))
    guard child.exitCode == 0 else {
      throw TestSupportFailure("openssl \(arguments.first ?? ""): \(lines.joined(separator: "\n"))")
    }
  }
}
