/// A plain-text table with aligned columns, for human output.
///
/// ```
/// KEY       VERSION  KEPT  LAST WRITE                      SIZE
/// settings       12    12  2025-11-21 07:21:30 (just now)  1.2 KB
/// ```
/// Cells must already be safe to print (see ``TerminalText``); widths are measured in terminal columns.
struct Table {
  /// How a column's cells are aligned.
  enum Alignment {
    case left
    case right
  }

  /// A column: its heading and alignment.
  struct Column {
    var title: String
    var alignment: Alignment

    init(_ title: String, _ alignment: Alignment = .left) {
      self.title = title
      self.alignment = alignment
    }
  }

  var columns: [Column]
  var rows: [[String]] = []

  init(_ columns: [Column]) {
    self.columns = columns
  }

  /// Adds a row; missing cells are empty.
  mutating func append(_ row: [String]) {
    rows.append(row)
  }

  /// The table, one line per row (heading first), columns separated by two spaces, no trailing spaces.
  func render() -> String {
    let all = [columns.map(\.title)] + rows
    var widths = [Int](repeating: 0, count: columns.count)
    for row in all {
      for (index, cell) in row.prefix(columns.count).enumerated() {
        widths[index] = max(widths[index], TerminalText.displayWidth(cell))
      }
    }
    var lines: [String] = []
    for row in all {
      var line = ""
      for index in columns.indices {
        let cell = index < row.count ? row[index] : ""
        let padding = String(repeating: " ", count: widths[index] - TerminalText.displayWidth(cell))
        if index > 0 { line += "  " }
        line += columns[index].alignment == .left ? cell + padding : padding + cell
      }
      while line.hasSuffix(" ") { line.removeLast() }
      lines.append(line)
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
