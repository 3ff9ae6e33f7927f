import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// `pld-tool set DB KEY JSON --if-version N` (Conditional writes, in PersistenceAndDurability): written only if the key is still at version N.
@Suite(.ownThread) struct ConditionalSetCommandTests {
  @Test func writesWhenTheKeyIsAtTheNamedVersion() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()  // settings is at version 3
    let result = runInProcess(["set", path, "theme", #""nord""#, "--if-version", "1"])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "Wrote version 2 of key theme.\n")
  }

  @Test func refusesWithExitOneNamingBothVersionsAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    let before = directory.snapshot("app.db")
    let result = runInProcess([
      "set", path, "settings", #"{"theme":"x","fontSize":1,"tags":[]}"#, "--if-version", "2",
    ])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "Error: Key \"settings\" is at version 3, not 2: nothing was written.\n")
    #expect(directory.snapshot("app.db") == before)
  }

  @Test func versionZeroCreatesOnlyAKeyThatHasNone() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    #expect(runInProcess(["set", path, "fresh", "1", "--if-version", "0"]).status == 0)
    let again = runInProcess(["set", path, "fresh", "2", "--if-version", "0"])
    #expect(again.status == 1)
    #expect(
      again.stderr == "Error: Key \"fresh\" is at version 1, not none (create only): nothing was written.\n")
    #expect(runInProcess(["delete", path, "fresh"]).status == 0)
    #expect(
      runInProcess(["set", path, "fresh", "3", "--if-version", "0"]).status == 0, "removed: none again")
  }

  @Test func aNegativeOrNonNumericVersionIsAUsageError() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    #expect(runInProcess(["set", path, "theme", "1", "--if-version", "-1"]).status == 64)
    #expect(runInProcess(["set", path, "theme", "1", "--if-version", "two"]).status == 64)
  }
}
