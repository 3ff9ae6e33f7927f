import Foundation
import Testing

@testable import PersistentLiveData

/// The value written as version `version` by the child's crash modes: its own version and a filler whose
/// length (20…2,519 bytes, some spilling to overflow pages) and letter are derived from the version, so a
/// reader can tell that a row holds exactly what was written for it.
///
/// Must match `CrashRecord` in Tests/Helpers/pld-test-child/main.swift.
struct CrashRecord: Codable, Sendable, Equatable {
  var version: Int64
  var fill: String

  init(version: Int64) {
    self.version = version
    let letter = Character(Unicode.Scalar(UInt8(97 + Int(version % 26))))
    fill = String(repeating: letter, count: 20 + Int((version &* 7_919) % 2_500))
  }
}

/// What a crash left on disk, read two independent ways: raw SQL on a separate connection, and the
/// library's own restore path (`PersistentStore` + `liveData`).
struct CrashInspection {
  /// The first row of `PRAGMA integrity_check` ("ok" when sound), or the error that stopped the reading.
  var integrity = "not checked"
  /// The newest version of the key (0 when none).
  var latest: Int64 = 0
  /// Rows of the key, and its oldest version: gap-free means `count == latest` and `oldest == 1`.
  var count: Int64 = 0
  var oldest: Int64 = 0
  /// Rows above the previously checked version whose payload is not `CrashRecord(version:)`.
  var mismatchedPayloads = 0
  /// What the library's restore path disagreed about, or its error (nil: it agrees with the raw reading).
  var storeProblem: String?

  var isGapFree: Bool { latest == 0 ? count == 0 : (count == latest && oldest == 1) }
  var isSound: Bool {
    integrity == "ok" && isGapFree && mismatchedPayloads == 0 && storeProblem == nil
  }

  var summary: String {
    "integrity \(integrity), latest \(latest), rows \(count) from \(oldest), "
      + "mismatched payloads \(mismatchedPayloads), store: \(storeProblem ?? "agrees")"
  }

  /// Inspects `key` in the file at `path`.
  ///
  /// - Parameters:
  ///   - checkedBelow: Payloads of versions up to this one were verified by an earlier inspection.
  ///   - throughStore: Also restore through `PersistentStore` (false for files not made by the library).
  ///   - storeFirst: Let the store run WAL recovery before the raw connection reads (alternate it).
  static func inspect(
    path: String, key: String, checkedBelow: Int64 = 0, throughStore: Bool = true, storeFirst: Bool = false
  ) -> CrashInspection {
    var inspection = CrashInspection()
    var restored: Result<Int64, RestoreFailure>?
    if throughStore && storeFirst { restored = restore(path: path, key: key) }
    do {
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      defer { connection.close() }
      inspection.integrity = try connection.scalarText("PRAGMA integrity_check") ?? "no answer"
      // A file that lost power before its first sync may hold no table yet: nothing was kept.
      let tables = try connection.scalarInt64("SELECT count(*) FROM sqlite_schema WHERE name = 'pld_values'")
      guard tables == 1 else {
        if throughStore { restored = restored ?? restore(path: path, key: key) }
        return inspection.with(restored)
      }
      let statement = try connection.prepare(
        "SELECT count(*), coalesce(min(version), 0), coalesce(max(version), 0) FROM pld_values WHERE key = ?")
      try statement.bind(key, at: 1)
      if try statement.step() {
        inspection.count = statement.int64(0)
        inspection.oldest = statement.int64(1)
        inspection.latest = statement.int64(2)
      }
      let rows = try connection.prepare(
        "SELECT version, payload FROM pld_values WHERE key = ? AND version > ?")
      try rows.bind(key, at: 1)
      try rows.bind(checkedBelow, at: 2)
      let decoder = JSONDecoder()
      while try rows.step() {
        let version = rows.int64(0)
        let record = try? decoder.decode(CrashRecord.self, from: rows.data(1))
        if record != CrashRecord(version: version) { inspection.mismatchedPayloads += 1 }
      }
    } catch {
      inspection.integrity = "error: \(error)"
    }
    if throughStore && !storeFirst { restored = restore(path: path, key: key) }
    return inspection.with(restored)
  }

  /// This inspection with the library's restore result compared to the raw reading.
  private func with(_ restored: Result<Int64, RestoreFailure>?) -> CrashInspection {
    var inspection = self
    switch restored {
    case .none:
      break
    case .failure(let failure)?:
      inspection.storeProblem = failure.description
    case .success(let version)? where version != latest:
      inspection.storeProblem = "restored version \(version), raw SQL says \(latest)"
    case .success?:
      break
    }
    return inspection
  }

  struct RestoreFailure: Error, CustomStringConvertible {
    let description: String
  }

  /// Restores `key` through the library: its version, after checking value and recent history.
  private static func restore(path: String, key: String) -> Result<Int64, RestoreFailure> {
    do {
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      let store = try PersistentStore(path: path, options: options)
      defer { try? store.close() }
      let live = try store.liveData(key, default: CrashRecord(version: 0))
      if live.value != CrashRecord(version: live.version) {
        return .failure(
          RestoreFailure(description: "restored value is not the one written as v\(live.version)"))
      }
      let recent = try live.history(limit: 4).map(\.version)
      let expected = Array(stride(from: live.version, to: max(0, live.version - 4), by: -1))
      if recent != expected {
        return .failure(RestoreFailure(description: "history starts \(recent), expected \(expected)"))
      }
      return .success(live.version)
    } catch {
      return .failure(RestoreFailure(description: "\(error)"))
    }
  }
}

/// The "ack N" lines of a child: the acknowledged versions, in order.
func acknowledgedVersions(_ lines: [String]) -> [Int64] {
  lines.compactMap { $0.hasPrefix("ack ") ? Int64($0.dropFirst(4)) : nil }
}
