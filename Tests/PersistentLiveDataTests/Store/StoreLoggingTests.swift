import Foundation
import Logging
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// Collects log records in memory.
private final class LogRecords: @unchecked Sendable {
  private let lock = NSLock()
  private var records: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []

  func append(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata) {
    lock.withLock { records.append((level, message, metadata)) }
  }

  var all: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] {
    lock.withLock { records }
  }

  func logger() -> Logger {
    var logger = Logger(label: "test") { _ in
      RecordingLogHandler { level, message, metadata in self.append(level, "\(message)", metadata) }
    }
    logger.logLevel = .trace
    return logger
  }
}

@Suite struct StoreLoggingTests {
  @Test func reportsOpeningMigrationsAndDecodeFallbacks() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("logged.db")
    let records = LogRecords()
    var options = StoreOptions()
    options.logger = records.logger()

    do {
      let store = try PersistentStore(path: path, options: options)
      try store.liveData("count", default: "text").set("not a number")
      try store.close()
    }
    #expect(records.all.contains { $0.level == .notice && $0.message == "Applied migration" })
    #expect(records.all.contains { $0.level == .info && $0.message == "Opened store" })

    options.onUndecodable = .useDefault
    let store = try PersistentStore(path: path, options: options)
    let count = try store.liveData("count", default: 0)
    #expect(count.value == 0)
    let warning = records.all.first { $0.level == .warning }
    #expect(warning?.message == "Stored value does not decode; starting from the default")
    #expect(warning?.metadata["version"] == "1")
    #expect(warning?.metadata["key"] == "\"count\"")
    try store.close()
  }

  @Test func reportsSlowWrites() throws {
    let folder = try TemporaryDirectory()
    let records = LogRecords()
    var options = StoreOptions()
    options.logger = records.logger()
    options.slowWriteThreshold = .zero  // every write counts as slow
    let store = try PersistentStore(path: folder.path("slow.db"), options: options)
    try store.liveData("k", default: 0).set(1)
    let slow = records.all.first { $0.message == "Slow write" }
    #expect(slow?.level == .warning)
    #expect(slow?.metadata["version"] == "1")
    try store.close()
  }
}
