import Foundation

/// A progress line on standard error for long operations, drawn only when standard error is a terminal
/// and only once the operation has run for a moment, at most ten times a second.
///
/// ```swift
/// let progress = Progress("exporting", total: rowCount)
/// for row in rows { …; progress.advance() }
/// progress.finish()
/// ```
final class Progress {
  private let label: String
  private var total: Int
  private var done = 0
  private let console: Console
  private let start = Date()
  private var lastDrawn: Date?
  private var isVisible = false

  /// How long an operation runs before its progress appears.
  static let delay: TimeInterval = 0.3
  /// The shortest time between two redraws.
  static let interval: TimeInterval = 0.1

  init(_ label: String, total: Int, console: Console = .current) {
    self.label = label
    self.total = total
    self.console = console
  }

  /// Counts `count` more items done and redraws if due.
  func advance(by count: Int = 1) {
    done += count
    draw()
  }

  /// Sets the number of items done (and the total, if it changed) and redraws if due.
  func update(done: Int, total: Int? = nil) {
    self.done = done
    if let total { self.total = total }
    draw()
  }

  /// Removes the progress line.
  func finish() {
    guard isVisible else { return }
    console.writeError("\r\u{1B}[K")
    isVisible = false
  }

  private func draw() {
    guard console.isErrorTerminal else { return }
    let now = Date()
    guard now.timeIntervalSince(start) >= Self.delay else { return }
    // An unknown total (0) is redrawn at the interval too; a known one also when it is reached.
    if let lastDrawn, now.timeIntervalSince(lastDrawn) < Self.interval, total == 0 || done < total { return }
    lastDrawn = now
    isVisible = true
    let count = total > 0 ? "\(done) of \(total) (\(done * 100 / total)%)" : "\(done)"
    console.writeError("\r\u{1B}[K\(label): \(count)")
  }
}
