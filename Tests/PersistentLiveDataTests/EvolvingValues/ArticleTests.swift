import Foundation
import Testing

@testable import PersistentLiveData

extension ValueSchemas {
  /// The DocC article "Evolving stored values" shows the code the schema tests run.
  @Suite struct EvolvingStoredValuesArticleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theArticleQuotesTheThreeBuildsOfNote() throws {
      let article = try String(
        contentsOf: Self.root.appendingPathComponent(
          "Sources/PersistentLiveData/PersistentLiveData.docc/MigrationsAndEvolvingValues.md"),
        encoding: .utf8)
      #expect(article.hasPrefix("# Evolving stored values\n"))
      let source = try String(
        contentsOf: Self.root.appendingPathComponent(
          "Tests/PersistentLiveDataTests/EvolvingValues/EvolvingNote.swift"),
        encoding: .utf8)
      let blocks = source.components(separatedBy: "// Article: begin schema ").dropFirst().map { block in
        let code = block.drop { $0 != "\n" }.dropFirst()
        return String(code[..<(code.range(of: "// Article: end")?.lowerBound ?? code.endIndex)])
          .replacingOccurrences(of: #"NoteV[0-9]"#, with: "Note", options: .regularExpression)
      }
      #expect(blocks.count == 3)
      for block in blocks {
        #expect(article.contains("```swift\n" + block + "```"), "the article lacks:\n\(block)")
      }
    }
  }
}

/// The README's example of a `PersistentValue` (named `Note` there), compiled and run.
private struct ReadmeNote: PersistentValue, Equatable {
  static let schemaVersion = 2  // schema 1 had no `pinned`
  var text: String
  var pinned: Bool

  init(text: String, pinned: Bool) {
    self.text = text
    self.pinned = pinned
  }

  private struct Schema1: Decodable { var text: String }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    self.init(text: try Schema1(from: decoder).text, pinned: false)
  }
}

extension ValueSchemas.EvolvingStoredValuesArticleTests {
  @Test func theReadmeExampleUpgradesSchema1() throws {
    let store = try PersistentStore.inMemory()
    _ = try store.setJSON(Data(#"{"text":"hello"}"#.utf8), forKey: "note")
    let note = try store.liveData("note", default: ReadmeNote(text: "", pinned: true))
    #expect(note.value == ReadmeNote(text: "hello", pinned: false))
  }
}
