package import Logging

/// A `LogHandler` that gives each record to `record`, with the logger's metadata and the record's merged
/// (the record's wins).
///
/// ```swift
/// let logger = Logger(label: "test") { _ in
///   RecordingLogHandler(logLevel: .debug) { level, message, metadata in lines.append("\(level) \(message)") }
/// }
/// ```
package struct RecordingLogHandler: LogHandler {
  package typealias Record = @Sendable (Logger.Level, Logger.Message, Logger.Metadata) -> Void

  private let record: Record
  package var metadata: Logger.Metadata = [:]
  package var logLevel: Logger.Level

  package init(logLevel: Logger.Level = .trace, record: @escaping Record) {
    self.logLevel = logLevel
    self.record = record
  }

  package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  package func log(event: LogEvent) {
    record(event.level, event.message, metadata.merging(event.metadata ?? [:]) { $1 })
  }
}
