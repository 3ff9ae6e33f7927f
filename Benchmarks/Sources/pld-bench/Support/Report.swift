import Foundation

/// One number of the machine-readable results: `{"group":"set","case":"library full 115 B",
/// "metric":"p50","unit":"us","value":212.4}`.
struct Metric: Codable {
  let group: String
  let `case`: String
  let metric: String
  let unit: String
  let value: Double
}

/// The printed table of one benchmark group.
struct Section {
  let title: String
  var header: [String]
  var rows: [[String]] = []
  var notes: [String] = []

  init(_ title: String, header: [String]) {
    self.title = title
    self.header = header
  }

  mutating func add(_ row: String...) { rows.append(row) }
}

/// Collects the results: prints each group's table as soon as it is done, keeps every number for the
/// JSON file.
final class Report {
  private(set) var metrics: [Metric] = []

  /// Records one number for the JSON results.
  func record(_ group: String, _ name: String, _ metric: String, _ value: Double, unit: String) {
    metrics.append(Metric(group: group, case: name, metric: metric, unit: unit, value: value))
  }

  /// Prints `section` as an aligned table: the first column left-aligned, the others right-aligned.
  func print(_ section: Section) {
    let lines = [section.header] + section.rows
    let columns = lines.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in
      lines.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
    }
    func render(_ line: [String]) -> String {
      line.enumerated().map { column, cell in
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        return column == 0 ? cell + padding : padding + cell
      }.joined(separator: "  ")
    }
    Swift.print("\n## \(section.title)\n")
    Swift.print(render(section.header))
    Swift.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
    section.rows.forEach { Swift.print(render($0)) }
    if !section.notes.isEmpty { Swift.print() }
    section.notes.forEach { Swift.print("  \($0)") }
  }

  /// Writes the run description and every metric as one JSON document to `path`.
  func writeJSON(to path: String, run: RunInfo) throws {
    struct Document: Encodable {
      let run: RunInfo
      let metrics: [Metric]
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(Document(run: run, metrics: metrics))
    try data.write(to: URL(fileURLWithPath: path), options: .atomic)
  }
}

/// Number formatting for the tables.
enum Format {
  /// A measurement with 3 significant digits at most, never in exponent notation.
  static func value(_ value: Double) -> String {
    guard value.isFinite else { return "-" }
    let magnitude = abs(value)
    let digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2
    return String(format: "%.\(digits)f", value)
  }

  /// A ratio such as `1.07x`.
  static func ratio(_ value: Double) -> String {
    value.isFinite ? String(format: "%.2fx", value) : "-"
  }

  /// An integer with thousands separators: `1,000,000`.
  static func count(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (offset, character) in digits.enumerated() {
      if offset > 0, (digits.count - offset).isMultiple(of: 3) { result.append(",") }
      result.append(character)
    }
    return value < 0 ? "-" + result : result
  }

  /// A payload size: `115 B`, `10.2 KB`.
  static func bytes(_ count: Int) -> String {
    count < 1_000 ? "\(count) B" : String(format: "%.1f KB", Double(count) / 1_000)
  }
}
