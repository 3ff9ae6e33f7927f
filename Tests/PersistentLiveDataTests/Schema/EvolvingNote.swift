import Foundation
import PersistentLiveData

// The three builds of one stored type that the DocC article "Evolving stored values"
// (MigrationsAndEvolvingValues.md) walks through, copied here so that the article's code is compiled and
// run: each build is named after its schema version, where the article calls all three `Note`.
// Keep the two in step.

/// Build 1: a plain Codable value (schema 1).
struct NoteV1: Codable, Sendable, Equatable {
  var text: String
  var tags: String  // comma-separated
}

/// Build 2 adds a field: `pinned`, which schema 1 does not have.
struct NoteV2: PersistentValue, Equatable {
  static let schemaVersion = 2

  var text: String
  var tags: String
  var pinned: Bool

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

/// Build 3 renames a field (`text` becomes `title`) and changes a field's type (`tags`, a
/// comma-separated `String`, becomes `[String]`).
struct NoteV3: PersistentValue, Equatable {
  static let schemaVersion = 3

  var title: String
  var tags: [String]
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
