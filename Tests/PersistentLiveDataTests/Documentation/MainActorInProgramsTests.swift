import Foundation
import PLDTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the DocC article "The main actor in command-line programs and daemons" and the README's threading
/// model say, run as real programs: the main actor of a synchronous main.swift that loops with `sleep`
/// never runs, while `dispatchMain()`, `RunLoop.main.run()` and an async main deliver.
@Suite(.ownThread) struct MainActorInProgramsTests {
  /// Runs `pld-sync-main-child mode` and returns its output lines and exit code.
  func runSyncMainChild(_ mode: String) throws -> (lines: [String], exitCode: Int32?) {
    let executable = ChildProcess.productsFolder.appendingPathComponent("pld-sync-main-child").path
    let child = try ChildProcess(executable, [mode])
    let lines = child.readAllLines()
    child.wait()
    return (lines, child.exitCode)
  }

  @Test func aSynchronousMainThatLoopsWithSleepNeverRunsMainActorObservers() throws {
    let run = try runSyncMainChild("sleep-loop")
    #expect(run.exitCode == 0)
    #expect(run.lines == ["value 3 version 3"], "value and version moved on; no observer was called")
  }

  @Test func dispatchMainRunsMainActorObservers() throws {
    let run = try runSyncMainChild("dispatch-main")
    #expect(run.exitCode == 0)
    #expect(run.lines.last == "delivered 3")
  }

  @Test func runLoopMainRunRunsMainActorObservers() throws {
    let run = try runSyncMainChild("run-loop")
    #expect(run.exitCode == 0)
    #expect(run.lines.last == "delivered 3")
  }

  /// The article's daemon (Tests/Helpers/pld-test-child/Daemon.swift) under an async main: its observer
  /// and its `values` loop both see another process's write, and SIGTERM closes the store and ends it.
  @Test(arguments: [SIGTERM, SIGINT])
  func theArticlesDaemonDeliversAndStopsCleanlyOnASignal(signal: Int32) throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("daemon.db")
    let daemon = try ChildProcess(
      ChildProcess.testChildPath, ["daemon", path, "limit"], mergingStandardError: true)
    let pid = daemon.pid
    // A daemon that hangs is killed, so that the test fails instead of waiting forever.
    DispatchQueue.global().asyncAfter(deadline: .now() + 30) { _ = Glibc.kill(pid, SIGKILL) }
    var lines: [String] = []
    /// Reads log lines until every one of `endings` has been seen since the call.
    func readUntil(_ endings: Set<String>) -> Bool {
      var missing = endings
      while !missing.isEmpty, let line = daemon.readLine() {
        lines.append(line)
        missing = missing.filter { !line.hasSuffix($0) }
      }
      return missing.isEmpty
    }
    try #require(readUntil(["ready"]), "\(lines)")

    let writer = try ChildProcess(ChildProcess.testChildPath, ["set", path, "limit", "42"])
    #expect(writer.readLine() == "ack 1")
    writer.wait()
    #expect(
      readUntil(["observer: limit 42", "values: limit 42"]),
      "the main-actor observer and the values loop both ran: \(lines)")
    daemon.kill(signal)
    #expect(readUntil(["closing", "closed"]), "\(lines)")
    daemon.wait()
    #expect(daemon.exitCode == 0)
  }

  @Test func theArticleQuotesTheDaemon() throws {
    let article = try QuotedSnippets.document(
      "Sources/PersistentLiveData/PersistentLiveData.docc/CommandLineProgramsAndDaemons.md")
    let snippet = try QuotedSnippets.snippet(
      "daemon", label: "Article",
      in: QuotedSnippets.root.appendingPathComponent("Tests/Helpers/pld-test-child/Daemon.swift").path)
    #expect(article.contains(snippet), "the article's daemon differs from Daemon.swift")
  }
}
