import Foundation
import PersistentLiveData

// The three builds of one stored type that the DocC article "Evolving stored values"
// (MigrationsAndEvolvingValues.md) walks through, compiled and run by the tests: the article quotes each
// block between the markers, with `NoteV1`, `NoteV2` and `NoteV3` all called `Note`
// (EvolvingStoredValuesArticleTests checks that it does).

// Article: begin schema 1
struct NoteV1: Codable, Sendable {
  var text: String
  var tags: String  // comma-separated
}
// Article: end

// Article: begin schema 2
struct NoteV2: PersistentValue {
  static let schemaVersion = 2

  var text: String
  var tags: String
  var pinned: Bool  // new in schema 2

  init(text: String, tags: String, pinned: Bool) {
    self.text = text
    self.tags = tags
    self.pinned = pinned
  }

  /// The stored form of schema 1.
  private struct Schema1: Decodable {
    var text: String
    var tags: String
  }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    // Only schema 1 is older than 2.
    let old = try Schema1(from: decoder)
    self.init(text: old.text, tags: old.tags, pinned: false)
  }
}
// Article: end

// Article: begin schema 3
struct NoteV3: PersistentValue {
  static let schemaVersion = 3

  var title: String  // `text` before schema 3
  var tags: [String]  // a comma-separated String before schema 3
  var pinned: Bool

  init(title: String, tags: [String], pinned: Bool) {
    self.title = title
    self.tags = tags
    self.pinned = pinned
  }

  private struct Schema1: Decodable {
    var text: String
    var tags: String
  }

  private struct Schema2: Decodable {
    var text: String
    var tags: String
    var pinned: Bool
  }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    switch storedSchemaVersion {
    case 1:
      let old = try Schema1(from: decoder)
      self.init(title: old.text, tags: Self.split(old.tags), pinned: false)
    default:
      let old = try Schema2(from: decoder)
      self.init(title: old.text, tags: Self.split(old.tags), pinned: old.pinned)
    }
  }

  private static func split(_ tags: String) -> [String] {
    tags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
  }
}
// Article: end

extension NoteV1: Equatable {}
extension NoteV2: Equatable {}
extension NoteV3: Equatable {}
