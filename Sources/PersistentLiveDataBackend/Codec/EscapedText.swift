/// Text from a store made safe to show: in error messages of the library and in `pld-tool`'s output.
///
/// Keys and values can hold anything, including escape sequences (`"\u{1B}[31m"`) a terminal would
/// execute, newlines that forge output lines, and bidirectional overrides that reorder what is displayed.
/// Every such character is shown as a visible Swift-style escape instead.
package enum EscapedText {
  /// Whether `scalar` must never be shown raw: C0 and C1 controls, DEL, format characters (bidirectional
  /// overrides, zero-width characters), the Unicode line and paragraph separators, unassigned code points.
  package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
      return true
    default:
      return false
    }
  }

  /// `text` with backslashes doubled and unsafe characters escaped (`\n`, `\t`, `\u{1B}`).
  package static func escaped(_ text: String) -> String {
    escaped(text, quotes: false)
  }

  private static func escaped(_ text: String, quotes: Bool) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"" where quotes: result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        if isUnsafe(scalar) {
          result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result
  }

  /// `text` in double quotes, escaped as ``escaped(_:)`` with quotes escaped too.
  package static func quoted(_ text: String) -> String {
    "\"" + escaped(text, quotes: true) + "\""
  }

  /// `text` as ``quoted(_:)``, shortened to 200 characters: how errors and log messages name keys and
  /// paths.
  package static func quotedForMessage(_ text: String) -> String {
    quoted(text.count > 200 ? String(text.prefix(200)) + "…" : text)
  }
}
