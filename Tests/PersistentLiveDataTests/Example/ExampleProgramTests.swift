import Foundation
import PLDTestSupport
import Testing

/// Runs the README's example program, `pld-todo`, as a user would: twice on the same database.
@Suite(.ownThread) struct ExampleProgramTests {
  private var executable: String { ChildProcess.productsFolder.appendingPathComponent("pld-todo").path }

  /// Runs pld-todo; its stderr is captured (not passed through to the test output) and returned.
  private func run(_ arguments: [String]) throws -> (lines: [String], errors: String, exitCode: Int32?) {
    let process = try ChildProcess(executable, arguments)
    let lines = process.readAllLines()
    process.wait()
    return (lines, process.standardError, process.exitCode)
  }

  @Test func stateContinuesAcrossRunsWithObserversAndHistory() throws {
    try #require(FileManager.default.isExecutableFile(atPath: executable), "pld-todo is built with the tests")
    let folder = try TemporaryDirectory()
    let database = folder.path("data/pld-todo/todo.db")

    let first = try run(["--db", database])
    #expect(first.exitCode == 0, "\(first.errors)")
    #expect(first.errors.isEmpty)
    #expect(first.lines.contains { $0.hasPrefix("Run #1") })
    #expect(first.lines.contains("  1. [ ] Item added by run #1"))
    #expect(first.lines.contains { $0.contains("observer: list is now version 1") })
    #expect(first.lines.contains { $0.contains("pld-tool history \(database) todo.list") })

    let second = try run(["--db", database])
    #expect(second.exitCode == 0, "\(second.errors)")
    #expect(second.errors.isEmpty)
    #expect(second.lines.contains { $0.hasPrefix("Run #2") })
    #expect(second.lines.contains("  2. [ ] Item added by run #2"))
    #expect(second.lines.contains { $0.contains("observer: list is now version 2") })
    #expect(
      second.lines.contains { $0.hasPrefix("  v2 ") } && second.lines.contains { $0.hasPrefix("  v1 ") })

    let undo = try run(["--db", database, "undo"])
    #expect(undo.exitCode == 0, "\(undo.errors)")
    #expect(undo.errors.isEmpty)
    #expect(undo.lines.contains("Restored the content of version 1 as version 3."))
    #expect(!undo.lines.contains { $0.contains("Item added by run #2") })
  }

  @Test func badUsageIsOneClearErrorNotACrash() throws {
    try #require(FileManager.default.isExecutableFile(atPath: executable), "pld-todo is built with the tests")
    let folder = try TemporaryDirectory()
    let result = try run(["--db", folder.path("todo.db"), "done", "zero"])
    #expect(result.exitCode == 1)
    #expect(result.lines.isEmpty)
    // One message naming the problem, then the usage line (TodoExampleTests checks every word of both).
    #expect(result.errors.hasPrefix("pld-todo: zero is not an item number"), "\(result.errors)")
    #expect(result.errors.contains("\nusage: pld-todo "), "\(result.errors)")
    #expect(!FileManager.default.fileExists(atPath: folder.path("todo.db")), "a usage error creates no file")
  }
}
