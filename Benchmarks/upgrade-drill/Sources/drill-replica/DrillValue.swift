import Foundation
import PersistentLiveData

/// What each replica writes to its own key. Schema 1 (every build): `{"seq", "writer", "at"}`, `at` in
/// seconds since 1970. Schema 2 (builds that know `writtenSchemaVersion`): `{"seq", "writer", "atMillis"}`.
/// Such a build reads both, and writes the schema `DRILL_WRITES` names (1 unless it says 2): the expand
/// step, then the contract step, of the README's recipe.
struct DrillValue: PersistentValue, Equatable {
  var seq: Int
  var writer: String
  var at: Double

  init(seq: Int, writer: String, at: Double) {
    self.seq = seq
    self.writer = writer
    self.at = at
  }

  private enum Schema1Keys: String, CodingKey { case seq, writer, at }

  #if PLD_DRILL_EXPAND_CONTRACT
  static let schemaVersion = 2
  static var writtenSchemaVersion: Int { DrillSettings.writesSchema }

  private enum Schema2Keys: String, CodingKey { case seq, writer, atMillis }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Schema2Keys.self)
    seq = try container.decode(Int.self, forKey: .seq)
    writer = try container.decode(String.self, forKey: .writer)
    at = Double(try container.decode(Int64.self, forKey: .atMillis)) / 1000
  }

  init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    let container = try decoder.container(keyedBy: Schema1Keys.self)
    seq = try container.decode(Int.self, forKey: .seq)
    writer = try container.decode(String.self, forKey: .writer)
    at = try container.decode(Double.self, forKey: .at)
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Schema2Keys.self)
    try container.encode(seq, forKey: .seq)
    try container.encode(writer, forKey: .writer)
    try container.encode(Int64((at * 1000).rounded()), forKey: .atMillis)
  }

  func encode(to encoder: any Encoder, schemaVersion: Int) throws {
    try encodeSchema1(to: encoder)
  }
  #else
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Schema1Keys.self)
    seq = try container.decode(Int.self, forKey: .seq)
    writer = try container.decode(String.self, forKey: .writer)
    at = try container.decode(Double.self, forKey: .at)
  }

  func encode(to encoder: any Encoder) throws {
    try encodeSchema1(to: encoder)
  }
  #endif

  private func encodeSchema1(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Schema1Keys.self)
    try container.encode(seq, forKey: .seq)
    try container.encode(writer, forKey: .writer)
    try container.encode(at, forKey: .at)
  }
}

/// The replica's settings, from its environment (set by `run`).
enum DrillSettings {
  static let environment = ProcessInfo.processInfo.environment
  /// The schema this build writes: `DRILL_WRITES` (1 or 2); builds of the first schema write 1.
  static let writesSchema = environment["DRILL_WRITES"] == "2" ? 2 : 1
  /// This replica's slot, 0 ..< `replicas`: it writes `drill/r<slot>` and observes every slot's key.
  static let slot = Int(environment["DRILL_SLOT"] ?? "") ?? 0
  static let replicas = Int(environment["DRILL_REPLICAS"] ?? "") ?? 4
  /// Writes per second of this replica.
  static let rate = Double(environment["DRILL_RATE"] ?? "") ?? 50
  /// What this build is called in the log ("old", "new").
  static let build = environment["DRILL_BUILD"] ?? "?"
  static let host = environment["DRILL_PG_HOST"] ?? "127.0.0.1"
  static let port = Int(environment["DRILL_PG_PORT"] ?? "") ?? 5432
  static let user = environment["DRILL_PG_USER"] ?? "postgres"
  static let database = environment["DRILL_PG_DATABASE"] ?? "drill"
  static let catchUpMilliseconds = Int(environment["DRILL_CATCH_UP_MS"] ?? "") ?? 1000
}

/// One JSON line per event on standard output, each written by one `write(2)`: the driver reads them.
enum DrillLog {
  static func emit(_ event: String, _ fields: [String: any Sendable] = [:]) {
    var object: [String: Any] = ["e": event, "t": Date().timeIntervalSince1970]
    for (name, value) in fields { object[name] = value }
    guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return
    }
    data.append(0x0A)
    FileHandle.standardOutput.write(data)
  }
}
