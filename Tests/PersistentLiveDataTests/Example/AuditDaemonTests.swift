import Foundation
import PLDTestSupport
import Testing

/// Runs the long-running example, `pld-audit`, as a user would: changes made by `pld-tool` from another
/// process reach both its audit log (`changes(since:)`, every version) and its main-actor observer; SIGTERM
/// stops it cleanly; a restart resumes after the last audited version.
@Suite(.ownThread) struct AuditDaemonTests {
  private var daemon: String { ChildProcess.productsFolder.appendingPathComponent("pld-audit").path }
  private var tool: String { ChildProcess.product("pld-tool") }

  /// Reads lines until one satisfies `condition`; the child is killed if that takes over 30 s.
  private func readLines(of child: ChildProcess, until condition: (String) -> Bool) -> [String] {
    let watchdog = DispatchWorkItem { child.kill(SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
    defer { watchdog.cancel() }
    var lines: [String] = []
    while let line = child.readLine() {
      lines.append(line)
      if condition(line) { break }
    }
    return lines
  }

  private func setFlags(_ json: String, in database: String, attribution: [String] = []) throws {
    let setter = try ChildProcess(tool, ["set", database, "flags", json] + attribution)
    _ = setter.readAllLines()
    setter.wait()
    #expect(setter.exitCode == 0)
  }

  @Test func auditsEveryVersionFromAnotherProcessStopsOnSIGTERMAndResumes() throws {
    try #require(FileManager.default.isExecutableFile(atPath: daemon), "pld-audit is built with the tests")
    let folder = try TemporaryDirectory("audit")
    let database = folder.path("flags.db")

    let first = try ChildProcess(daemon, ["--db", database])
    #expect(readLines(of: first) { $0.hasPrefix("pld-audit: auditing flags") }.count == 1)
    try setFlags(#"{"beta": true}"#, in: database, attribution: ["--author", "alice", "--reason", "INC-42"])
    try setFlags(#"{"beta": false, "dark": true}"#, in: database)
    // Both the audit (every version) and the main-actor observer (the latest, coalescing allowed) hear
    // of the writes, in either order.
    func observed(_ line: String) -> Bool {
      line.hasPrefix("observer: flags is now") && line.hasSuffix(#"{"beta":false,"dark":true}"#)
    }
    var auditedTwo = false
    var observedLatest = false
    let seen = readLines(of: first) { line in
      auditedTwo = auditedTwo || line.hasPrefix("audit: v2 ")
      observedLatest = observedLatest || observed(line)
      return auditedTwo && observedLatest
    }
    #expect(
      seen.contains { $0.hasPrefix("audit: v1 ") && $0.hasSuffix(#" by alice (INC-42): {"beta":true}"#) })
    #expect(seen.contains { $0.hasPrefix("audit: v2 ") && $0.hasSuffix(#": {"beta":false,"dark":true}"#) })
    #expect(seen.contains(where: observed))
    first.kill(SIGTERM)
    let rest = readLines(of: first) { $0.hasPrefix("pld-audit: stopped") }
    first.wait()
    #expect(first.exitCode == 0)
    #expect(rest.last == "pld-audit: stopped (SIGTERM) after version 2")

    // A restart resumes after version 2: version 3 is audited, 1 and 2 are not repeated.
    let second = try ChildProcess(daemon, ["--db", database])
    #expect(
      readLines(of: second) { $0.hasPrefix("pld-audit: auditing") }.last?.hasSuffix("after version 2") == true
    )
    try setFlags(#"{"beta": true, "dark": true}"#, in: database)
    let resumed = readLines(of: second) { $0.hasPrefix("audit: ") }
    #expect(resumed.last?.hasPrefix("audit: v3 ") == true)
    second.kill(SIGINT)
    let end = readLines(of: second) { $0.hasPrefix("pld-audit: stopped") }
    second.wait()
    #expect(second.exitCode == 0)
    #expect(end.last == "pld-audit: stopped (SIGINT) after version 3")
    #expect(!(resumed + end).contains { $0.hasPrefix("audit: v1 ") || $0.hasPrefix("audit: v2 ") })
  }

  @Test func recordsAVersionItCannotReadAndResumesAfterIt() throws {
    try #require(FileManager.default.isExecutableFile(atPath: daemon), "pld-audit is built with the tests")
    let folder = try TemporaryDirectory("audit")
    let database = folder.path("flags.db")
    let daemonProcess = try ChildProcess(daemon, ["--db", database])
    #expect(readLines(of: daemonProcess) { $0.hasPrefix("pld-audit: auditing flags") }.count == 1)
    try setFlags(#"{"beta": true}"#, in: database)
    try setFlags(#""not a set of flags""#, in: database)  // another program writes another shape
    try setFlags(#"{"beta": false}"#, in: database)
    let seen = readLines(of: daemonProcess) { $0.hasPrefix("audit: v3 ") }
    let audited = seen.filter { $0.hasPrefix("audit: ") }
    #expect(audited.count == 3, "\(seen)")
    #expect(audited.first?.hasPrefix("audit: v1 ") == true)
    #expect(
      audited.dropFirst().first.map { $0.hasPrefix("audit: v2 ") && $0.contains("not readable as flags") }
        == true, "\(audited)")
    #expect(audited.last?.hasSuffix(#": {"beta":false}"#) == true)
    daemonProcess.kill(SIGTERM)
    let end = readLines(of: daemonProcess) { $0.hasPrefix("pld-audit: stopped") }
    daemonProcess.wait()
    #expect(daemonProcess.exitCode == 0)
    #expect(end.last == "pld-audit: stopped (SIGTERM) after version 3")
  }
}
