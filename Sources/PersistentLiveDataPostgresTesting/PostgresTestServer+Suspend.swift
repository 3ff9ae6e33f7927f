import Foundation

extension PostgresTestServer {
  /// Freezes the server with `SIGSTOP` — its postmaster and every backend — without closing anything:
  /// connections stay open and hang, new ones are accepted by the kernel and never answered, as with a
  /// server that stopped answering. ``unsuspend()`` lets it go on.
  ///
  /// ```swift
  /// try server.suspend()
  /// defer { try? server.unsuspend() }
  /// ```
  /// - Throws: ``PostgresTestServerError`` when the server's process is not found.
  public func suspend() throws {
    let postmaster = try postmasterProcess()
    // The postmaster first, so that it starts no backend after the list is taken.
    kill(postmaster, SIGSTOP)
    for child in Self.children(of: postmaster) { kill(child, SIGSTOP) }
  }

  /// Lets a server frozen by ``suspend()`` go on (`SIGCONT`): the connections it held answer again.
  ///
  /// ```swift
  /// try server.unsuspend()
  /// ```
  /// - Throws: ``PostgresTestServerError`` when the server's process is not found.
  public func unsuspend() throws {
    let postmaster = try postmasterProcess()
    for child in Self.children(of: postmaster) { kill(child, SIGCONT) }
    kill(postmaster, SIGCONT)
  }

  /// The postmaster's process id, from the first line of `postmaster.pid`.
  private func postmasterProcess() throws -> pid_t {
    let (_, data, _) = try owned()
    let text = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)) ?? ""
    guard let line = text.split(separator: "\n").first, let pid = pid_t(line), pid > 0 else {
      throw PostgresTestServerError.failed(
        step: "find the postmaster", output: "no postmaster.pid in \(data)")
    }
    return pid
  }

  /// The processes whose parent is `parent` (from `/proc/PID/stat`).
  private static func children(of parent: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> pid_t? in
      guard let pid = pid_t(entry),
        let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { return nil }
      // "pid (name) state ppid …": the name may hold spaces and parentheses; the last ")" ends it.
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
    }
  }
}
