import Foundation
import PersistentLiveData

/// Makes text from a store safe to print on a terminal.
///
/// Keys and values can hold anything, including escape sequences (`"\u{1B}[31m"`, `"\u{1B}]52;…"`) that a
/// terminal would execute, newlines that forge output lines, and bidirectional overrides that reorder
/// what is displayed. Human output shows every such character as a visible escape instead.
enum TerminalText {
  /// Whether `scalar` must never reach a terminal raw (see `EscapedText.isUnsafe`).
  static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool { EscapedText.isUnsafe(scalar) }

  /// `text` with backslashes doubled and unsafe characters escaped Swift-style (`\n`, `\t`, `\u{1B}`).
  ///
  /// ```swift
  /// TerminalText.escaped("a\u{1B}[31mb")   // a\u{1B}[31mb (as visible characters)
  /// ```
  static func escaped(_ text: String) -> String { EscapedText.escaped(text) }

  /// `text` in double quotes, escaped as ``escaped(_:)`` with quotes escaped too.
  ///
  /// ```swift
  /// TerminalText.quoted("say \"hi\"\n")   // "say \"hi\"\n"
  /// ```
  static func quoted(_ text: String) -> String { EscapedText.quoted(text) }

  /// A key as shown in tables and headings: as is when it is plain (letters, digits and
  /// `. _ - / : @ + #`), quoted and escaped otherwise, so that spaces, quotes and control characters
  /// are visible and one key can never look like another.
  static func key(_ key: String) -> String {
    let isPlain =
      !key.isEmpty
      && key.unicodeScalars.allSatisfy { scalar in
        if ".-_/:@+#".unicodeScalars.contains(scalar) { return true }
        return !isUnsafe(scalar) && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil)
      }
    return isPlain ? key : quoted(key)
  }

  /// The number of terminal columns `text` takes: 2 for wide East Asian characters and most emoji, 0 for
  /// combining marks and zero-width characters, 1 otherwise. (An approximation of `wcwidth`, enough to
  /// align table columns.)
  static func displayWidth(_ text: String) -> Int {
    var width = 0
    for scalar in text.unicodeScalars {
      switch scalar.properties.generalCategory {
      case .nonspacingMark, .enclosingMark, .format:
        continue
      default:
        width += isWide(scalar.value) ? 2 : 1
      }
    }
    return width
  }

  private static func isWide(_ value: UInt32) -> Bool {
    switch value {
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
      return true
    default:
      return false
    }
  }

  /// `text` cut to at most `maximum` columns, ending in `…` when cut.
  static func truncated(_ text: String, toWidth maximum: Int) -> String {
    guard displayWidth(text) > maximum else { return text }
    var result = ""
    var width = 0
    for character in text {
      let characterWidth = displayWidth(String(character))
      if width + characterWidth > maximum - 1 { break }
      result.append(character)
      width += characterWidth
    }
    return result + "…"
  }
}
