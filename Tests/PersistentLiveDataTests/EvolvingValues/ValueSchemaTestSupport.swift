import Foundation
import Testing

@testable import PersistentLiveData

/// The value schema tests: `PersistentValue`, schema versions per stored version, upgrades on read.
@Suite enum ValueSchemas {}

/// Every row of `pld_values` as the sqlite3 client reads it — key, version, written_at, the payload's
/// bytes in hex and schema_version — one line per row, by key then version.
func rawRows(_ path: String, key: String? = nil) throws -> [String] {
  let filter = key.map { "WHERE key = '\($0)'" } ?? ""
  let text = try SQLiteCLI.query(
    path,
    "SELECT key, version, written_at, hex(payload), schema_version FROM pld_values \(filter) ORDER BY key, version"
  )
  return text.isEmpty ? [] : text.split(separator: "\n").map(String.init)
}

/// The schema_version column of every row of `key`, by version.
func storedSchemaVersions(_ path: String, key: String) throws -> [Int] {
  try SQLiteCLI.query(path, "SELECT schema_version FROM pld_values WHERE key = '\(key)' ORDER BY version")
    .split(separator: "\n").compactMap { Int($0) }
}

/// Counts the calls of `init(from:storedSchemaVersion:)`, to show that a row of the current schema never
/// goes through it.
final class UpgradeCounter: Sendable {
  static let shared = UpgradeCounter()
  private let calls = Locked([Int]())

  func record(_ storedSchemaVersion: Int) { calls.withLock { $0.append(storedSchemaVersion) } }
  func take() -> [Int] {
    calls.withLock { calls in
      defer { calls = [] }; return calls
    }
  }
}

/// Schema 2 of a counter whose schema 1 stored a bare number: it records each upgrade.
struct CountedV2: PersistentValue, Equatable {
  static let schemaVersion = 2
  var count: Int

  init(count: Int) { self.count = count }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    UpgradeCounter.shared.record(storedSchemaVersion)
    count = try decoder.singleValueContainer().decode(Int.self)
  }
}

/// A schema-2 type whose upgrade always fails.
struct FailingUpgradeV2: PersistentValue, Equatable {
  static let schemaVersion = 2
  var text: String

  init(text: String) { self.text = text }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "cannot upgrade"))
  }
}
