extension JSONValue {
  /// The value as compact JSON (`{"a":1,"b":[true,null]}`), safe to print on a terminal: every control,
  /// format and separator character in strings is escaped (`\u001b`, `\u202e`).
  ///
  /// ```swift
  /// JSONValue.object([.init("theme", .string("dark"))]).compact   // {"theme":"dark"}
  /// ```
  var compact: String {
    var output = ""
    write(to: &output, indent: nil, level: 0)
    return output
  }

  /// The value as JSON indented by two spaces per level, escaped like ``compact``.
  ///
  /// ```swift
  /// {
  ///   "theme": "dark",
  ///   "fontSize": 14
  /// }
  /// ```
  var pretty: String {
    var output = ""
    write(to: &output, indent: "  ", level: 0)
    return output
  }

  private func write(to output: inout String, indent: String?, level: Int) {
    switch self {
    case .null: output += "null"
    case .bool(let value): output += value ? "true" : "false"
    case .number(let text): output += text
    case .string(let text): Self.writeString(text, to: &output)
    case .array(let elements):
      guard !elements.isEmpty else {
        output += "[]"
        return
      }
      output += "["
      for (offset, element) in elements.enumerated() {
        if offset > 0 { output += "," }
        Self.newline(&output, indent: indent, level: level + 1)
        element.write(to: &output, indent: indent, level: level + 1)
      }
      Self.newline(&output, indent: indent, level: level)
      output += "]"
    case .object(let members):
      guard !members.isEmpty else {
        output += "{}"
        return
      }
      output += "{"
      for (offset, member) in members.enumerated() {
        if offset > 0 { output += "," }
        Self.newline(&output, indent: indent, level: level + 1)
        Self.writeString(member.key, to: &output)
        output += indent == nil ? ":" : ": "
        member.value.write(to: &output, indent: indent, level: level + 1)
      }
      Self.newline(&output, indent: indent, level: level)
      output += "}"
    }
  }

  private static func newline(_ output: inout String, indent: String?, level: Int) {
    guard let indent else { return }
    output += "\n"
    for _ in 0..<level { output += indent }
  }

  /// Writes `text` as a JSON string literal, escaping quotes, backslashes and every character that is
  /// unsafe on a terminal (as UTF-16 `\uXXXX` escapes, so the result stays valid JSON).
  static func writeString(_ text: String, to output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case "\u{08}": output += "\\b"
      case "\u{0C}": output += "\\f"
      default:
        if TerminalText.isUnsafe(scalar) {
          for unit in String(scalar).utf16 {
            let digits = String(unit, radix: 16)
            output += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
          }
        } else {
          output.unicodeScalars.append(scalar)
        }
      }
    }
    output += "\""
  }

  /// `text` as a JSON string literal (see ``writeString(_:to:)``).
  static func quoted(_ text: String) -> String {
    var output = ""
    writeString(text, to: &output)
    return output
  }
}
