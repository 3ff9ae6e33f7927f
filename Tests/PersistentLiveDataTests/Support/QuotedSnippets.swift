import Foundation

/// The tests that mirror README and DocC code line for line: a test file marks the mirrored code with
/// `// <label>: begin NAME` and `// <label>: end NAME`, and the document must contain that text.
///
/// ```swift
/// let snippet = try QuotedSnippets.snippet("quick start", label: "README")
/// #expect(try QuotedSnippets.document("README.md").contains(snippet))
/// ```
enum QuotedSnippets {
  /// The repository's root, from this file's path.
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The text of a document of the repository (`README.md`, `Sources/…/Article.md`).
  static func document(_ relativePath: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
  }

  /// The lines between `// label: begin name` and `// label: end name` in `file` (the calling test
  /// file), without the markers; with `indent`, that many leading spaces removed from every line.
  static func snippet(
    _ name: String, label: String, indent: Int = 0, in file: String = #filePath
  ) throws -> String {
    let source = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
    let padding = String(repeating: " ", count: indent)
    guard let begin = source.range(of: "\(padding)// \(label): begin \(name)\n"),
      let end = source.range(
        of: "\(padding)// \(label): end \(name)", range: begin.upperBound..<source.endIndex)
    else { throw TestSupportError("markers of \(label) snippet '\(name)' missing in \(file)") }
    let lines = source[begin.upperBound..<end.lowerBound].split(
      separator: "\n", omittingEmptySubsequences: false)
    return lines.map { $0.hasPrefix(padding) ? String($0.dropFirst(indent)) : String($0) }
      .joined(separator: "\n")
  }
}
