import Foundation

/// The inspector's page: one self-contained HTML document (style and script inline, allowed by the
/// response's nonce), nothing loaded from anywhere else. Its files are `Serve/Page/index.html`, `app.css`
/// and `app.js`, compiled into pld-tool; the browser tests (`Tests/Browser`) run the script.
///
/// The page lists every key (`.row` elements with `data-key` and `data-version`, kept current) — those
/// under a `/` prefix after a `.group` header (`data-group`, their count; a click closes it) — shows a
/// key's timeline (each version's value, attribution and diff to the version before), and follows
/// `GET /api/events`. Everything from the store is inserted with `textContent`, never as HTML.
///
/// ```swift
/// let html = InspectorPage.html(nonce: "3f2a…", allowsWrites: false, store: "/var/app/app.db", limitation: nil)
/// ```
enum InspectorPage {
  /// The page with `nonce` on its `<style>` and `<script>`; `allowsWrites` shows the rollback buttons,
  /// `store` names the store in the header and `limitation` (when there is one) is said under it.
  static func html(nonce: String, allowsWrites: Bool, store: String, limitation: String?) -> String {
    template
      .replacingOccurrences(of: "{{NONCE}}", with: nonce)
      .replacingOccurrences(of: "{{WRITES}}", with: allowsWrites ? "1" : "0")
      .replacingOccurrences(of: "{{STORE}}", with: escaped(store))
      .replacingOccurrences(of: "{{LIMITATION}}", with: limitation.map(escaped) ?? "")
      .replacingOccurrences(of: "{{LIMITED}}", with: limitation == nil ? " hidden" : "")
  }

  /// `text` as HTML text (and attribute) content.
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text.unicodeScalars {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.unicodeScalars.append(character)
      }
    }
    return result
  }

  /// The whole document: `Page/index.html` with `Page/app.css` and `Page/app.js` in its `<style>` and
  /// `<script>`, embedded when pld-tool is built (`Package.swift`), put together once.
  private static let template = file(PackageResources.index_html)
    .replacingOccurrences(of: "{{APP_CSS}}", with: file(PackageResources.app_css))
    .replacingOccurrences(of: "{{APP_JS}}", with: file(PackageResources.app_js))

  /// An embedded file's text without its last line break.
  private static func file(_ bytes: [UInt8]) -> String {
    let text = String(decoding: bytes, as: UTF8.self)
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
  }
}
