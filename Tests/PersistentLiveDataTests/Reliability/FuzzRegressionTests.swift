import Foundation
import PLDFuzzHarness
import Testing

@testable import PersistentLiveData

extension Reliability.Timed {
  /// Replays the fuzzers' seed corpora and every input that once crashed them (Fuzz/regressions/, one
  /// file per finding) through the same harness, in the ordinary test run: a fixed crash stays fixed.
  @Suite struct FuzzRegressionTests {
    /// `Fuzz/<folder>` of this repository, found from this file's path.
    static func inputs(_ folder: String) throws -> [(name: String, data: Data)] {
      let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
      let directory = root.appendingPathComponent("Fuzz/\(folder)")
      let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { !$0.hasPrefix(".") }.sorted()
      return try names.map { ($0, try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test(arguments: ["corpus/restore", "regressions/restore"])
    func restoreInputsNeverCrash(folder: String) throws {
      let inputs = try Self.inputs(folder)
      if folder.hasPrefix("corpus") { #expect(!inputs.isEmpty, "the seed corpus is missing") }
      for input in inputs { FuzzHarness.restore(input.data) }
    }

    @Test(arguments: ["corpus/tool", "regressions/tool"])
    func toolInputsNeverCrash(folder: String) throws {
      let inputs = try Self.inputs(folder)
      if folder.hasPrefix("corpus") { #expect(!inputs.isEmpty, "the seed corpus is missing") }
      let store = try PersistentStore.inMemory()
      for input in inputs { FuzzHarness.tool(input.data, store: store) }
    }
  }
}
