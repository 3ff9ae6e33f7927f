import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PostgresTestServer {
  /// A server that listens on a TCP port of 127.0.0.1 besides its Unix socket — with TLS when
  /// ``certificate`` and ``key`` name PEM files: what a test of a remote connection needs.
  ///
  /// ```swift
  /// let server = try PostgresTestServer.start(
  ///   network: .init(port: 55432, certificate: "/tmp/certs/server.crt", key: "/tmp/certs/server.key"))
  /// // postgres://test@localhost:55432/postgres?sslmode=verify-full&sslrootcert=/tmp/certs/ca.crt
  /// ```
  public struct Network: Sendable {
    /// The TCP port (and the number in the socket's name, `.s.PGSQL.PORT`).
    public var port: Int
    /// The server's certificate (PEM); nil for a server without TLS (`ssl = off`).
    public var certificate: String?
    /// Its private key (PEM).
    public var key: String?

    /// A port, and TLS with `certificate` and `key` when both are given.
    public init(port: Int, certificate: String? = nil, key: String? = nil) {
      self.port = port
      self.certificate = certificate
      self.key = key
    }
  }

  /// The server options that choose where it listens, and TLS.
  var networkOptions: String {
    guard let network else { return "-c listen_addresses='' -p 5432" }
    let tls =
      network.certificate != nil && network.key != nil
      ? "-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key" : "-c ssl=off"
    return "-c listen_addresses='127.0.0.1' -p \(network.port) \(tls)"
  }

  /// Copies the certificate and key into the data directory, readable by the server's user only (the
  /// server refuses a key that others can read).
  func installCertificate() throws {
    guard let network, let certificate = network.certificate, let key = network.key else { return }
    let (_, data, _) = try owned()
    let owner = geteuid() == 0 ? getpwnam("postgres")?.pointee : nil
    for (source, name) in [(certificate, "server.crt"), (key, "server.key")] {
      let target = "\(data)/\(name)"
      do {
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: source, toPath: target)
      } catch {
        throw PostgresTestServerError.failed(step: "install \(name)", output: "\(error)")
      }
      chmod(target, 0o600)
      if let owner { chown(target, owner.pw_uid, owner.pw_gid) }
    }
  }
}
