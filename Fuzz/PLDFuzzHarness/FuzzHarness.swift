package import Foundation
package import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// What the fuzz targets run on each input, shared with the regression tests that replay the inputs that
/// once crashed (Tests/PersistentLiveDataTests/Reliability/FuzzRegressionTests.swift).
///
/// Errors are expected and ignored; a crash, a trap or a sanitizer report is a finding. `precondition`s
/// here state invariants of the library that no input may break.
package enum FuzzHarness {
  /// Any JSON value, for reading payloads whatever their shape.
  package enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let value = try? container.decode(Bool.self) {
        self = .bool(value)
      } else if let value = try? container.decode(Double.self) {
        self = .number(value)
      } else if let value = try? container.decode(String.self) {
        self = .string(value)
      } else if let value = try? container.decode([JSONValue].self) {
        self = .array(value)
      } else {
        self = .object(try container.decode([String: JSONValue].self))
      }
    }

    package func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      switch self {
      case .null: try container.encodeNil()
      case .bool(let value): try container.encode(value)
      case .number(let value): try container.encode(value)
      case .string(let value): try container.encode(value)
      case .array(let value): try container.encode(value)
      case .object(let value): try container.encode(value)
      }
    }
  }

  /// A private folder for this process's database files.
  static let folder: String = {
    let path = NSTemporaryDirectory() + "/pld-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }()

  /// The restore path on an arbitrary database image: the bytes become a store file, which is opened,
  /// restored and read like an app would, then written to. The first byte holds flags: 1 skip quick_check,
  /// 2 the rest is a 4-byte big-endian length, the database and then its -wal, 4 retention `.last(2)`,
  /// 8 `.lastDecodable`.
  package static func restore(_ input: Data) {
    guard let flags = input.first else { return }
    var image = input.dropFirst()
    var wal: Data?
    if flags & 2 != 0, image.count >= 4 {  // 4-byte big-endian database length ‖ database ‖ wal
      let length = image.prefix(4).reduce(0) { $0 << 8 | Int($1) }
      let start = image.index(image.startIndex, offsetBy: 4)
      let end = image.index(start, offsetBy: min(length, image.count - 4))
      wal = Data(image[end...])
      image = image[start..<end]
    }
    let path = folder + "/store.db"
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    guard FileManager.default.createFile(atPath: path, contents: Data(image)) else { return }
    if let wal { _ = FileManager.default.createFile(atPath: path + "-wal", contents: wal) }

    var options = StoreOptions(retention: flags & 4 != 0 ? .last(2) : .all)
    options.verifiesIntegrityOnOpen = flags & 1 == 0
    options.externalChangePollInterval = nil
    options.onUndecodable = flags & 8 != 0 ? .lastDecodable : .throwError
    guard let store = try? PersistentStore(path: path, options: options) else { return }
    defer { try? store.close() }
    guard let keys = try? store.keys() else { return }
    for key in keys.prefix(16) {
      guard let live = try? store.liveData(key, default: JSONValue.null) else { continue }
      _ = try? live.history(limit: 8)
      _ = try? live.value(at: live.version)
      _ = try? live.value(at: 1)
      let before = live.version
      if (try? live.set(.string("fuzz"))) != nil {
        precondition(live.version > before, "a set that returned did not move the version forward")
      }
    }
    _ = try? store.prune(key: nil, keep: 1)
  }

  /// pld-tool's input: a key and a JSON text (split at the first 0xFF byte; keys are UTF-8, so 0xFF never
  /// occurs in one), stored with `setJSON(_:forKey:)` as `pld-tool set` does, then read back.
  package static func tool(_ input: Data) {
    // A fresh in-memory store per input: memory stays flat over millions of inputs.
    guard let store = try? PersistentStore.inMemory() else { return }
    defer { try? store.close() }
    tool(input, store: store)
  }

  package static func tool(_ input: Data, store: PersistentStore) {
    let split = input.firstIndex(of: 0xFF) ?? input.endIndex
    let key = String(decoding: input[..<split], as: UTF8.self)
    let json = split < input.endIndex ? Data(input[input.index(after: split)...]) : Data()
    guard let version = try? store.setJSON(json, forKey: key) else { return }
    guard let row = try? store.rows(key: key, limit: 1).first else {
      preconditionFailure("setJSON returned version \(version) but the row cannot be read back")
    }
    precondition(row.version == version, "read back version \(row.version), written \(version)")
    // What the store wrote is valid JSON that it accepts again, and re-storing reaches a fixed point at
    // the latest on the second round. (Not always the first: Foundation reads "-0.0" as the integer 0
    // but writes it as "-0" first — Fuzz/regressions/tool/negative-zero.)
    var payload = row.payload
    for round in 1...2 {
      guard let again = try? store.setJSON(payload, forKey: key),
        let stored = try? store.rows(key: key, limit: 1).first, stored.version == again
      else {
        preconditionFailure("the stored payload of version \(version) was refused when stored again")
      }
      if round == 2 { precondition(stored.payload == payload, "canonical JSON does not settle") }
      payload = stored.payload
    }
    _ = try? store.liveData(key, default: JSONValue.null)
    _ = try? store.rollbackJSON(key: key, to: version)
  }
}
