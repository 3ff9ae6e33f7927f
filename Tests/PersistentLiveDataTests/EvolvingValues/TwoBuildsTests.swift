import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension ValueSchemas {
  /// Two processes running two builds of one type on one key: this process has build 2 (schema 2), the
  /// child program (`pld-test-child note-v1-…`) build 1. The old build must not damage the new build's
  /// data, and what it writes must still reach the new build, upgraded.
  @Suite(.serialized, .ownThread) struct TwoBuildsTests {
    static let key = "note"

    /// Runs the child program to its end and returns its lines.
    static func child(_ arguments: [String]) throws -> [String] {
      let child = try ChildProcess(ChildProcess.testChildPath, arguments)
      let lines = child.readAllLines()
      child.wait()
      #expect(child.exitCode == 0, "\(arguments): \(lines)")
      return lines
    }

    @Test func anOldBuildReadingNewerRowsReportsThemUnderEachPolicyAndWritesNothing() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      let note = try store.liveData(Self.key, default: NoteV2(text: "", tags: "", pinned: false))
      try note.set(NoteV2(text: "a", tags: "x", pinned: true))
      try note.set(NoteV2(text: "b", tags: "x", pinned: false))
      let rows = try rawRows(path)
      #expect(try storedSchemaVersions(path, key: Self.key) == [2, 2])

      #expect(
        try Self.child(["note-v1-read", path, Self.key, "throwError"]) == [
          "restore-error valueSchemaTooNew 2 stored 2 supported 1", "done",
        ])
      #expect(
        try Self.child(["note-v1-read", path, Self.key, "useDefault"]) == [
          "restore 2 ", "history 0", "entries 2", "rollback-error valueSchemaTooNew", "done",
        ])
      #expect(
        try Self.child(["note-v1-read", path, Self.key, "lastDecodable"]) == [
          "restore 2 ", "history 0", "entries 2", "rollback-error valueSchemaTooNew", "done",
        ])
      #expect(try rawRows(path) == rows, "the old build wrote nothing")
      #expect(note.version == 2)
      try store.close()
    }

    @Test func whatAnOldBuildWritesReachesTheNewBuildUpgradedAndLeavesItsRowsIntact() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("shared.db")
      let store = try PersistentStore(path: path)
      let note = try store.liveData(Self.key, default: NoteV2(text: "", tags: "", pinned: false))
      try note.set(NoteV2(text: "a", tags: "x", pinned: true))
      let rows = try rawRows(path)

      #expect(try Self.child(["note-v1-set", path, Self.key, "from build 1"]) == ["ack 2"])
      let deadline = ContinuousClock.now + .seconds(5)
      while note.version < 2, ContinuousClock.now < deadline { usleep(1_000) }
      #expect(note.version == 2)
      #expect(note.value == NoteV2(text: "from build 1", tags: "", pinned: false))
      #expect(try storedSchemaVersions(path, key: Self.key) == [2, 1])
      #expect(Array(try rawRows(path).prefix(1)) == rows, "the new build's row is untouched")
      #expect(try note.history().map(\.value.text) == ["from build 1", "a"])
      try store.close()
    }
  }
}
