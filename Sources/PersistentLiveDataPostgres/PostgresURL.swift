import Foundation
import PostgresNIO

/// A `postgres://` URL as libpq and psql read it — where `pld-tool --postgres` connects, and how:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or `postgres://USER@/DATABASE?host=FOLDER[&port=PORT]`
/// for the Unix socket `FOLDER/.s.PGSQL.PORT`, with libpq's `sslmode` and `sslrootcert` parameters
///. Without a password in the URL, `PGPASSWORD` is used, so that it need not appear on a
/// command line.
///
/// | `sslmode` | TLS | the server's certificate |
/// |---|---|---|
/// | `disable` | never | — |
/// | `prefer` (the default) | when the server offers it | not checked |
/// | `require` | always: a server without TLS is refused | not checked (checked as `verify-ca` when `sslrootcert` is given, as libpq does) |
/// | `verify-ca` | always | must chain to `sslrootcert` |
/// | `verify-full` | always | must chain to `sslrootcert` and name the host |
///
/// `sslrootcert` is a PEM file of root certificates, or `system` for the system's trusted roots; without
/// it, `verify-ca` and `verify-full` read `~/.postgresql/root.crt`, as libpq does. A Unix socket never
/// uses TLS (it does not leave the machine), whatever `sslmode` says.
///
/// ```swift
/// let url = try PostgresURL("postgres://app@db.internal/app?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem")
/// let client = PostgresClient(configuration: try url.configuration())
/// print(url.redacted)   // postgres://app@db.internal:5432/app?sslmode=verify-full — never the password
/// ```
package struct PostgresURL: Sendable, Equatable {
  /// libpq's `sslmode`, less `allow` (which tries without TLS first).
  enum SSLMode: String, Sendable, CaseIterable {
    case disable
    case prefer
    case require
    case verifyCA = "verify-ca"
    case verifyFull = "verify-full"
  }

  package var host: String?
  package var port: Int
  /// The socket's path, for a URL that names a Unix socket's folder.
  var socketPath: String?
  package var user: String
  package var password: String?
  package var database: String?
  var sslMode: SSLMode
  /// `sslrootcert`: a PEM file, or `system`.
  var sslRootCert: String?

  /// Reads `text`.
  ///
  /// - Throws: ``PostgresURLError`` for a URL that is not `postgres://USER…`, an unknown `sslmode` or
  ///   parameter, or a port that is not a number. Its message never holds the password.
  package init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
    guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
      let user = url.user, !user.isEmpty
    else {
      throw PostgresURLError(
        "a server's URL is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]"
          + " or postgres://USER@/DATABASE?host=SOCKET-FOLDER, got \(Self.redacted(text))")
    }
    var parameters: [String: String] = [:]
    for item in url.queryItems ?? [] {
      guard ["host", "port", "sslmode", "sslrootcert", "dbname", "user"].contains(item.name) else {
        throw PostgresURLError(
          "unknown parameter \"\(item.name)\" in the server's URL (known: host, port, sslmode, sslrootcert)")
      }
      parameters[item.name] = item.value ?? ""
    }
    let mode = parameters["sslmode"] ?? "prefer"
    guard let sslMode = SSLMode(rawValue: mode) else {
      throw PostgresURLError(
        "sslmode=\(mode) is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    var port = url.port ?? 5432
    if let text = parameters["port"] {
      guard let number = Int(text), (1...65_535).contains(number) else {
        throw PostgresURLError("port=\(text) in the server's URL is not a port number")
      }
      port = number
    }
    let socketFolder = parameters["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
    let path = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    self.user = parameters["user"] ?? user
    self.port = port
    socketPath = socketFolder.map { "\($0)/.s.PGSQL.\(port)" }
    host =
      socketFolder == nil
      ? (parameters["host"] ?? url.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost") : nil
    password = url.password ?? environment["PGPASSWORD"]
    database = parameters["dbname"] ?? (path.isEmpty ? nil : path)
    self.sslMode = sslMode
    sslRootCert = parameters["sslrootcert"]
  }

  /// The URL without its password: what may be printed and shown.
  package var redacted: String {
    if let socketPath {
      let folder = URL(fileURLWithPath: socketPath).deletingLastPathComponent().path
      return "postgres://\(user)@/\(database ?? "")?host=\(folder)&port=\(port)"
    }
    let mode = sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)"
    return "postgres://\(user)@\(host ?? "localhost"):\(port)/\(database ?? "")\(mode)"
  }

  /// A URL's text with the password (between `user:` and `@`) replaced by `***`.
  package static func redacted(_ text: String) -> String {
    guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
      let colon = text[scheme.upperBound..<at].firstIndex(of: ":")
    else { return "\"\(text)\"" }
    return "\"\(text[..<text.index(after: colon)])***\(text[at...])\""
  }

  /// The client's configuration: the endpoint, the role, and TLS as ``sslMode`` says.
  ///
  /// - Throws: ``PostgresURLError`` when `sslrootcert` (or `~/.postgresql/root.crt`) cannot be read.
  package func configuration() throws -> PostgresClient.Configuration {
    if let socketPath {
      return .init(unixSocketPath: socketPath, username: user, password: password, database: database)
    }
    let tls: PostgresClient.Configuration.TLS =
      switch try tlsSettings() {
      case nil: .disable
      case let (settings, required)?: required ? .require(settings) : .prefer(settings)
      }
    return .init(
      host: host ?? "localhost", port: port, username: user, password: password, database: database, tls: tls)
  }

  /// Connects once, as a client made from ``configuration()`` would, and says whether the session is
  /// encrypted (`pg_stat_ssl`).
  ///
  /// - Throws: ``PostgresURLError`` that says what failed — for TLS, which rule refused the server —
  ///   never with the password.
  package func probe(logger: Logger = Logger(label: "pld.postgres.probe")) async throws -> Bool {
    var configuration: PostgresConnection.Configuration
    if let socketPath {
      configuration = .init(
        unixSocketPath: socketPath, username: user, password: password, database: database)
    } else {
      let tls: PostgresConnection.Configuration.TLS =
        switch try tlsSettings() {
        case nil: .disable
        case let (settings, required)?:
          required
            ? .require(try NIOSSLContext(configuration: settings))
            : .prefer(try NIOSSLContext(configuration: settings))
        }
      configuration = .init(
        host: host ?? "localhost", port: port, username: user, password: password, database: database,
        tls: tls)
    }
    configuration.options.connectTimeout = .seconds(10)
    let connection: PostgresConnection
    do {
      connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    } catch {
      throw PostgresURLError(
        "cannot connect to \(redacted): "
          + (describeTLSFailure(error) ?? SharedDatabase.describeConnectError(error)))
    }
    var encrypted = false
    do {
      for try await ssl in try await connection.query(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger
      ).decode(Bool.self) {
        encrypted = ssl
      }
    } catch {
      try? await connection.close()
      throw PostgresURLError("cannot read from \(redacted): \(SharedDatabase.describe(error))")
    }
    try? await connection.close()
    return encrypted
  }

  /// The TLS settings of a TCP connection, and whether TLS is required; nil for `disable`.
  private func tlsSettings() throws -> (settings: TLSConfiguration, required: Bool)? {
    guard sslMode != .disable else { return nil }
    var settings = TLSConfiguration.makeClientConfiguration()
    settings.minimumTLSVersion = .tlsv12
    let verifies =
      sslMode == .verifyCA || sslMode == .verifyFull || (sslMode == .require && sslRootCert != nil)
    if verifies {
      settings.trustRoots = try roots()
      settings.certificateVerification = sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
    } else {
      settings.certificateVerification = .none
    }
    return (settings, sslMode != .prefer)
  }

  /// The roots a certificate must chain to.
  private func roots() throws -> NIOSSLTrustRoots {
    if sslRootCert == "system" { return .default }
    let path =
      sslRootCert
      ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".postgresql/root.crt").path
    guard FileManager.default.isReadableFile(atPath: path) else {
      throw PostgresURLError(
        "sslmode=\(sslMode.rawValue) checks the server's certificate against root certificates, but "
          + (sslRootCert == nil
            ? "the URL names none (sslrootcert=FILE) and \(path) does not exist"
            : "sslrootcert=\(path) cannot be read"))
    }
    do {
      return .certificates(try NIOSSLCertificate.fromPEMFile(path))
    } catch {
      throw PostgresURLError("sslrootcert=\(path) holds no PEM certificate: \(error)")
    }
  }

  /// Why a connection made with this URL failed, in words a user can act on — what TLS refused, and
  /// which rule — or nil when the error is not about TLS. Never holds the password.
  func describeTLSFailure(_ error: any Error) -> String? {
    let text = String(reflecting: error)
    let place = "\(host ?? "localhost"):\(port)"
    if (error as? PSQLError)?.code == .sslUnsupported || text.contains("sslUnsupported") {
      return
        "the server at \(place) does not offer TLS, and sslmode=\(sslMode.rawValue) refuses a connection without it"
    }
    if text.contains("failedToValidateHostname") || text.contains("hostname") && text.contains("NIOSSL") {
      return "the server's certificate does not name the host \"\(host ?? "")\" (sslmode=verify-full)"
    }
    if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
      return "the server's certificate at \(place) does not chain to the root certificates of "
        + "\(sslRootCert.map { "sslrootcert=\($0)" } ?? "~/.postgresql/root.crt") (sslmode=\(sslMode.rawValue))"
    }
    return nil
  }
}

/// A `postgres://` URL that cannot be used, said without its password.
package struct PostgresURLError: Error, CustomStringConvertible {
  package let description: String
  package init(_ description: String) { self.description = description }
}
