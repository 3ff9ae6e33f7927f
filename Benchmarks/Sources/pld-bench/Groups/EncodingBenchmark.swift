import Foundation
import PersistentLiveData

/// Issue 7: for a value whose JSON encoding dominates the write (~10 KB), what would a faster encoding
/// path gain? Splits `set` into encoding and insert, and times encoders against each other, all
/// interleaved in one process:
///
/// - `JSONEncoder` with sorted keys (the library's codec settings) and without;
/// - `JSONSerialization` of a dictionary built before timing (Foundation's serializer alone), and of a
///   dictionary built from the value in the timed call (what a "faster Foundation path" really costs);
/// - a hand-written writer for these two types (the floor of any generated or specialized encoder);
/// - raw SQLite committing the pre-encoded payload (the write without encoding) and the whole raw
///   encode + insert, and the library's `set`, in `.normal` and `.full`.
@MainActor
struct EncodingBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var rounds: Int { quick ? 2 : 9 }

  func run(_ report: Report) throws {
    var section = Section(
      "Encoding: where the time of a set goes, and what a faster encoder would gain (issue 7)",
      header: ["value", "step", "bytes", "p50 µs", "p99 µs", "mean µs", "% of lib .normal", "% of lib .full"])
    var notes: [String] = []
    notes += try measure(
      Profile.sample, jsonObject: \.jsonObject, handWritten: HandWrittenJSON.profile,
      calls: quick ? 20 : 2_000, section: &section, report)
    notes += try measure(
      Catalog.sample, jsonObject: \.jsonObject, handWritten: HandWrittenJSON.catalog,
      calls: quick ? 10 : 120, section: &section, report)
    section.notes =
      [
        "p50/p99/mean per call, pooled over \(rounds) interleaved rounds. % columns: the step's p50 as a share of",
        "the library's set p50 measured in the same rounds. raw insert = BEGIN IMMEDIATE + max(version) + INSERT",
        "+ COMMIT of the already encoded payload; encode + insert = the raw baseline of the set table.",
      ] + notes
    report.print(section)
  }

  /// The steps of one value size, interleaved; returns the conclusion lines for the notes.
  private func measure<Value: Codable & Sendable>(
    _ make: @escaping (Int) -> Value, jsonObject: KeyPath<Value, [String: Any]>,
    handWritten: @escaping (Value) -> [UInt8], calls: Int, section: inout Section, _ report: Report
  ) throws -> [String] {
    var values = ValueCycle(make)
    let size = Format.bytes(values.encodedSize())
    let sorted = RawVersionedStore.makeEncoder()
    let unsorted = JSONEncoder()
    unsorted.outputFormatting = [.withoutEscapingSlashes]
    let prebuilt = (0..<64).map { make($0)[keyPath: jsonObject] }
    var prebuiltIndex = 0
    let payloads = (0..<64).map { (try? sorted.encode(make($0))) ?? Data() }
    var payloadIndex = 0
    var bytes: [String: Int] = [:]

    // The database steps, one file each.
    var stores: [PersistentStore] = []
    var paths: [String] = []
    @MainActor func library(_ durability: Durability) throws -> @MainActor () throws -> Void {
      let path = try scratch.freshFile("encoding-library.db")
      let store = try PersistentStore(path: path, options: StoreOptions(durability: durability))
      let liveData = try store.liveData("value", default: make(0))
      stores.append(store)
      paths.append(path)
      var cycle = ValueCycle(make)
      return { try liveData.set(cycle.take()) }
    }
    func raw(_ synchronous: String) throws -> RawVersionedStore {
      let path = try scratch.freshFile("encoding-raw.db")
      paths.append(path)
      return try RawVersionedStore(path: path, synchronous: synchronous)
    }
    let rawNormal = try raw("NORMAL")
    let rawFull = try raw("FULL")
    let rawEncodeNormal = try raw("NORMAL")

    var sink = 0
    let steps: [(name: String, run: @MainActor () throws -> Void)] = [
      ("JSONEncoder, sorted keys (raw)", { sink &+= try sorted.encode(values.take()).count }),
      ("JSONEncoder, unsorted", { sink &+= try unsorted.encode(values.take()).count }),
      (
        "JSONSerialization, prebuilt dictionary",
        {
          prebuiltIndex = (prebuiltIndex + 1) % prebuilt.count
          sink &+= try JSONSerialization.data(withJSONObject: prebuilt[prebuiltIndex], options: [.sortedKeys])
            .count
        }
      ),
      (
        "JSONSerialization, dictionary from value",
        {
          sink &+= try JSONSerialization.data(
            withJSONObject: values.take()[keyPath: jsonObject], options: [.sortedKeys]
          ).count
        }
      ),
      ("hand-written writer", { sink &+= handWritten(values.take()).count }),
      (
        "raw insert only, .normal",
        {
          payloadIndex = (payloadIndex + 1) % payloads.count
          try rawNormal.set(payload: payloads[payloadIndex], key: "value")
        }
      ),
      (
        "raw insert only, .full",
        {
          payloadIndex = (payloadIndex + 1) % payloads.count
          try rawFull.set(payload: payloads[payloadIndex], key: "value")
        }
      ),
      ("raw encode + insert, .normal", { try rawEncodeNormal.set(values.take(), key: "value") }),
      ("library set, .normal", try library(.normal)),
      ("library set, .full", try library(.full)),
    ]
    // Sizes of one value through each encoder, for the table.
    let sample = make(1)
    bytes["JSONEncoder, sorted keys (raw)"] = try sorted.encode(sample).count
    bytes["JSONEncoder, unsorted"] = try unsorted.encode(sample).count
    let serialized = try JSONSerialization.data(
      withJSONObject: sample[keyPath: jsonObject], options: [.sortedKeys])
    bytes["JSONSerialization, prebuilt dictionary"] = serialized.count
    bytes["JSONSerialization, dictionary from value"] = serialized.count
    bytes["hand-written writer"] = handWritten(sample).count
    // The hand-written writer must produce JSON that decodes to the same value.
    let decoded = try JSONDecoder().decode(Value.self, from: Data(handWritten(sample)))
    try BenchmarkError.expect(
      try sorted.encode(decoded) == sorted.encode(sample), "the hand-written JSON does not round-trip")

    let writers = steps.map { step in Writer(name: step.name, path: "", write: step.run) }
    let results = try measureWrites(writers, rounds: rounds, writesPerRound: calls, warmUp: quick ? 2 : 20)
    try BenchmarkError.expect(sink > 0, "nothing was encoded")

    let medians = results.map { $0.latency.median }
    let libraryNormal = medians[8]
    let libraryFull = medians[9]
    for (index, step) in steps.enumerated() {
      let latency = results[index].latency
      section.add(
        size, step.name, bytes[step.name].map(Format.count) ?? "", Format.value(latency.median / 1_000),
        Format.value(latency.percentile(99) / 1_000), Format.value(latency.mean / 1_000),
        Format.value(100 * latency.median / libraryNormal), Format.value(100 * latency.median / libraryFull))
      report.record("encoding", "\(size) \(step.name)", "p50", latency.median / 1_000, unit: "us")
      report.record("encoding", "\(size) \(step.name)", "p99", latency.percentile(99) / 1_000, unit: "us")
      report.record("encoding", "\(size) \(step.name)", "mean", latency.mean / 1_000, unit: "us")
    }
    section.rows.append([])

    // What replacing JSONEncoder (sorted keys) with each faster path would save per set.
    let encoder = medians[0]
    let fromValue = medians[3]
    let written = medians[4]
    func share(_ saved: Double, of total: Double) -> String { Format.value(100 * saved / total) + "%" }
    report.record(
      "encoding", "\(size) gain", "jsonSerializationFromValue", (encoder - fromValue) / 1_000, unit: "us")
    report.record("encoding", "\(size) gain", "handWritten", (encoder - written) / 1_000, unit: "us")
    report.record(
      "encoding", "\(size) gain", "handWrittenShareOfNormalSet", (encoder - written) / libraryNormal,
      unit: "x")
    report.record(
      "encoding", "\(size) gain", "handWrittenShareOfFullSet", (encoder - written) / libraryFull, unit: "x")
    report.record("encoding", "\(size) gain", "encoderShareOfNormalSet", encoder / libraryNormal, unit: "x")

    for store in stores { try store.close() }
    for path in paths { scratch.remove(database: path) }
    return [
      "\(size): JSONEncoder is \(share(encoder, of: libraryNormal)) of a .normal set, \(share(encoder, of: libraryFull)) of a .full one. "
        + "JSONSerialization (dictionary built from the value) would save \(Format.value((encoder - fromValue) / 1_000)) µs per set,",
      "  a hand-written encoder \(Format.value((encoder - written) / 1_000)) µs (\(share(encoder - written, of: libraryNormal)) of .normal, "
        + "\(share(encoder - written, of: libraryFull)) of .full).",
    ]
  }
}

/// JSON written by hand for the two benchmark values, keys sorted as the library writes them: the
/// fastest a specialized (for example macro-generated) encoder could be.
enum HandWrittenJSON {
  static func profile(_ profile: Profile) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(160)
    append(profile, to: &out)
    return out
  }

  static func catalog(_ catalog: Catalog) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(128 * catalog.entries.count + 64)
    out += #"{"entries":["#.utf8
    for (index, entry) in catalog.entries.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      append(entry, to: &out)
    }
    out += #"],"revision":"#.utf8
    out += String(catalog.revision).utf8
    out += #","title":"#.utf8
    appendString(catalog.title, to: &out)
    out.append(UInt8(ascii: "}"))
    return out
  }

  private static func append(_ profile: Profile, to out: inout [UInt8]) {
    out += #"{"email":"#.utf8
    appendString(profile.email, to: &out)
    out += #","id":"#.utf8
    out += String(profile.id).utf8
    out += #","isActive":"#.utf8
    out += (profile.isActive ? "true" : "false").utf8
    out += #","name":"#.utf8
    appendString(profile.name, to: &out)
    out += #","score":"#.utf8
    out += String(profile.score).utf8
    out += #","tags":["#.utf8
    for (index, tag) in profile.tags.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      appendString(tag, to: &out)
    }
    out += "]}".utf8
  }

  /// A JSON string literal: quotes, backslashes and control characters escaped.
  private static func appendString(_ string: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        out.append(UInt8(ascii: "\\"))
        out.append(byte)
      case 0..<0x20:
        out += "\\u00".utf8
        let hex = Array("0123456789abcdef".utf8)
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 0xF)])
      default:
        out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
  }
}
