import Foundation
import Logging
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Reliability.Timed {
  /// One damaged page in the middle of a store opened with the default options: the read that meets it
  /// throws `corrupt` naming the path, the key, the version and the SQLite code, and reports a
  /// `StoreEvent`; `history()` never returns a shorter list without a word; nothing is reset or
  /// rewritten. The damage is real: bytes written into the closed file at a page's offset.
  @Suite struct DamagedPageTests {
    static let key = "diary"
    static let versions = 400

    /// `"entry 0042 xxx…"`: about 220 bytes, some eighteen versions to a 4 KiB page.
    static func entry(_ version: Int) -> String {
      "entry " + String(format: "%04d", version) + " " + String(repeating: "x", count: 200)
    }

    static func options(
      _ policy: DecodeFailurePolicy = .throwError, logger: Logger? = nil
    ) -> StoreOptions {
      var options = StoreOptions(onUndecodable: policy)
      options.externalChangePollInterval = nil
      options.logger = logger
      return options
    }

    /// A closed store (no `-wal` left) with `versions` versions of ``key`` and a key after it.
    static func writeStore(at path: String) throws {
      let store = try PersistentStore(path: path, options: options())
      let diary = try store.liveData(key, default: "")
      try store.transaction {
        for version in 1...versions { try diary.set(entry(version)) }
        try store.liveData("zz-after", default: 0).set(1)
      }
      try store.close()
      #expect(!fileExists(path + "-wal"), "the close checkpointed everything into the file")
    }

    /// The offset in the file of version `version`'s payload (its opening quote) and the page size.
    static func payloadOffset(of version: Int, in path: String) throws -> (offset: Int, pageSize: Int) {
      let bytes = try #require(fileBytes(path))
      let marker = Data(entry(version).prefix(11).utf8)
      let found = try #require(bytes.range(of: marker), "version \(version) is in the file")
      let raw = Int(bytes[16]) << 8 | Int(bytes[17])
      #expect(bytes[found.lowerBound - 1] == UInt8(ascii: "\""), "the payload is a JSON string")
      return (found.lowerBound - 1, raw == 1 ? 65_536 : raw)
    }

    /// Every event of `store` from `stream` once the store is closed.
    static func drain(
      _ stream: AsyncStream<StoreEvent>, closing store: PersistentStore
    ) async throws
      -> [StoreEvent]
    {
      try store.close()
      var events: [StoreEvent] = []
      for await event in stream { events.append(event) }
      return events
    }

    /// A b-tree page holding old versions overwritten with garbage: the newest versions still read, the
    /// history that reaches the page throws `corrupt` naming the key, the version it got to and the SQLite
    /// code, an event reports it, writes elsewhere go on, and the damaged page is never written over.
    @Test func aDamagedPageIsReportedByTheReadThatMeetsItAndByAnEvent() async throws {
      let folder = try TemporaryDirectory("damaged-page")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      let (offset, pageSize) = try Self.payloadOffset(of: 100, in: path)
      let page = offset / pageSize
      try writeFile(
        path,
        {
          var bytes = fileBytes(path) ?? Data()
          bytes.replaceSubrange(
            page * pageSize..<(page + 1) * pageSize, with: pseudoRandomBytes(count: pageSize, seed: 39))
          return bytes
        }())
      let damagedPage = try #require(fileBytes(path))[page * pageSize..<(page + 1) * pageSize]

      let store = try PersistentStore(path: path, options: Self.options())
      let events = store.events()
      let diary = try store.liveData(Self.key, default: "")
      #expect(diary.version == Int64(Self.versions) && diary.value == Self.entry(Self.versions))
      #expect(try diary.history(limit: 5).map(\.version) == Array((396...400).reversed()))

      let error = expectStoreError("corrupt", "the history reaches the damaged page") {
        try diary.history()
      }
      guard case .corrupt(let errorPath, let detail)? = error else { return }
      #expect(errorPath == path)
      #expect(detail.contains("key \"diary\"") && detail.contains("past version"), "\(detail)")
      #expect(detail.contains("SQLite code 11"), "\(detail)")
      expectStoreError("corrupt") { try diary.historyEntries() }
      let atVersion = expectStoreError("corrupt") { try diary.value(at: 100) }
      #expect(
        atVersion?.description.contains("version 100 of key \"diary\"") == true,
        "\(String(describing: atVersion))")

      // Writes that do not touch the damaged page go on.
      try diary.set("after the damage")
      try store.liveData("zz-after", default: 0).set(2)

      let seen = try await Self.drain(events, closing: store)
      let reported = seen.compactMap { event -> (String, String?, Int64?, PersistentLiveDataError)? in
        guard case .damagedPage(let path, let key, let version, let error) = event else { return nil }
        return (path, key, version, error)
      }
      #expect(reported.count == 3, "history, historyEntries and value(at:) each reported it: \(seen)")
      #expect(reported.allSatisfy { $0.0 == path && $0.1 == Self.key })
      #expect(reported.first?.3 == error, "the event carries the error the read threw")
      #expect(reported.last?.2 == 100, "value(at:) names the version it read")
      let after = try #require(fileBytes(path))
      #expect(after[page * pageSize..<(page + 1) * pageSize] == damagedPage, "the damaged page was rewritten")
    }

    /// One version's payload garbled inside an intact page (no page check can see it): under the default
    /// policy `history()` throws the error naming the key and the version instead of leaving it out.
    @Test func aVersionThatDoesNotDecodeMakesTheHistoryThrowUnderTheDefaultPolicy() throws {
      let folder = try TemporaryDirectory("damaged-page")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      let (offset, _) = try Self.payloadOffset(of: 100, in: path)
      try Self.garble(path, at: offset)

      let store = try PersistentStore(path: path, options: Self.options())
      defer { try? store.close() }
      let diary = try store.liveData(Self.key, default: "")
      #expect(diary.version == Int64(Self.versions), "the newest version decodes")
      let error = expectStoreError("undecodable") { try diary.history() }
      if case .undecodable(let key, let version, _)? = error {
        #expect(key == Self.key && version == 100)
      }
      // The versions before it are there to read, and every version with its outcome.
      #expect(try diary.history(limit: 300).count == 300)
      let entries = try diary.historyEntries()
      #expect(entries.count == Self.versions)
      #expect(entries.filter { $0.value == nil }.map(\.version) == [100])
      #expect(throws: PersistentLiveDataError.self) { try diary.value(at: 100) }
    }

    /// Under a lenient policy the version is left out, and reported: an event always, and a warning to
    /// the logger when there is one.
    @Test(arguments: [(DecodeFailurePolicy.useDefault, false), (.lastDecodable, true)])
    func aLenientPolicyLeavesTheVersionOutAndReportsIt(policy: DecodeFailurePolicy, logs: Bool) async throws {
      let folder = try TemporaryDirectory("damaged-page")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      let (offset, _) = try Self.payloadOffset(of: 100, in: path)
      try Self.garble(path, at: offset)

      let warnings = Locked<[String]>([])
      let logger = Logger(label: "damaged-page") { _ in
        RecordingLogHandler(logLevel: .warning) { _, message, metadata in
          warnings.withLock { $0.append("\(message) \(metadata["version"].map { "\($0)" } ?? "")") }
        }
      }
      let store = try PersistentStore(path: path, options: Self.options(policy, logger: logs ? logger : nil))
      let events = store.events()
      let diary = try store.liveData(Self.key, default: "")
      let history = try diary.history()
      #expect(history.count == Self.versions - 1 && !history.contains { $0.version == 100 })
      let seen = try await Self.drain(events, closing: store)
      guard case .versionLeftOutOfHistory(let key, let version, let error)? = seen.first,
        case .undecodable(let errorKey, let errorVersion, _) = error
      else {
        Issue.record("expected the version left out to be reported, got \(seen)")
        return
      }
      #expect(key == Self.key && version == 100 && errorKey == Self.key && errorVersion == 100)
      #expect(seen.count == 1, "\(seen)")
      let expected = logs ? ["history() leaves out a version that does not decode 100"] : []
      #expect(warnings.withLock { $0 } == expected)
    }

    /// A damaged page the open itself reads (the schema's, on page 1 after the header) refuses the file at
    /// open with `corrupt` naming the SQLite code; the file is left as it was.
    @Test func aDamagedPageTheOpenReadsRefusesTheFileNamingTheSQLiteCode() throws {
      let folder = try TemporaryDirectory("damaged-page")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      let (_, pageSize) = try Self.payloadOffset(of: 1, in: path)
      var bytes = try #require(fileBytes(path))
      bytes.replaceSubrange(100..<pageSize, with: pseudoRandomBytes(count: pageSize - 100, seed: 7))
      try writeFile(path, bytes)
      let error = expectStoreError("corrupt") { try PersistentStore(path: path, options: Self.options()) }
      #expect(error?.description.contains("SQLite code 11") == true, "\(String(describing: error))")
      #expect(fileBytes(path) == bytes, "a refused file was written to")
    }

    /// Every connection to a file checks the b-tree pages it reads.
    @Test func everyFileConnectionChecksThePagesItReads() throws {
      let folder = try TemporaryDirectory("damaged-page")
      let path = folder.path("store.db")
      try Self.writeStore(at: path)
      for mode in [SQLiteConnection.OpenMode.readWrite, .readOnly, .readOnlyImmutable] {
        let connection = try SQLiteConnection(path: path, mode: mode)
        defer { connection.close() }
        #expect(try connection.pragmaInt("cell_size_check") == 1, "\(mode)")
      }
    }

    /// Replaces the opening quote of a payload with `[`: the page stays valid, the JSON does not.
    static func garble(_ path: String, at offset: Int) throws {
      var bytes = try #require(fileBytes(path))
      bytes[offset] = UInt8(ascii: "[")
      try writeFile(path, bytes)
    }
  }
}
