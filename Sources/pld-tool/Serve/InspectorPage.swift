import Foundation

/// The inspector's page: one self-contained HTML document (style and script inline, allowed by the
/// response's nonce), nothing loaded from anywhere else.
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

  /// The whole document: ``document``, then the script (`InspectorPage+Script.swift`).
  private static let template = document + "\n" + script

  /// The document before its script: head, style and body.
  private static let document = #"""
    <!doctype html>
    <html lang="en" data-writes="{{WRITES}}">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="icon" href="data:,">
    <title>pld-tool serve</title>
    <style nonce="{{NONCE}}">
    :root {
      --bg: #ffffff; --fg: #1d2330; --muted: #5f6b7a; --line: #dde2e8; --panel: #f6f8fa;
      --accent: #2458d6; --select: #e3ebfd; --flash: #fff3bf; --add: #1a7f37; --del: #cf222e; --chg: #9a6700;
      color-scheme: light;
    }
    @media (prefers-color-scheme: dark) {
      :root:not([data-theme="light"]) {
        --bg: #0f1217; --fg: #dbe1ea; --muted: #8c97a6; --line: #2a313c; --panel: #161b22;
        --accent: #6ea1ff; --select: #1f2f4d; --flash: #3d3514; --add: #3fb950; --del: #f85149; --chg: #d29922;
        color-scheme: dark;
      }
    }
    :root[data-theme="dark"] {
      --bg: #0f1217; --fg: #dbe1ea; --muted: #8c97a6; --line: #2a313c; --panel: #161b22;
      --accent: #6ea1ff; --select: #1f2f4d; --flash: #3d3514; --add: #3fb950; --del: #f85149; --chg: #d29922;
      color-scheme: dark;
    }
    * { box-sizing: border-box; }
    html, body { margin: 0; height: 100%; background: var(--bg); color: var(--fg);
      font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    header { display: flex; gap: 12px; align-items: center; padding: 10px 16px; border-bottom: 1px solid var(--line);
      background: var(--panel); }
    header h1 { font-size: 16px; margin: 0; font-weight: 600; }
    header .store { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
      max-width: 40ch; font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
    #limitation { margin: 0; padding: 6px 16px; font-size: 12px; color: var(--del); border-bottom: 1px solid var(--line); }
    #replicas { margin: 0; padding: 6px 16px; font-size: 12px; border-bottom: 1px solid var(--line); }
    #replicas.warning { color: var(--del); font-weight: 600; }
    #filter { flex: 1; max-width: 420px; padding: 6px 10px; border: 1px solid var(--line); border-radius: 6px;
      background: var(--bg); color: var(--fg); font: inherit; }
    #status { font-size: 12px; color: var(--muted); }
    #notice { font-size: 12px; color: var(--del); }
    #status.live::before { content: "\25CF  "; color: var(--add); }
    #status.down::before { content: "\25CF  "; color: var(--del); }
    button { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line);
      border-radius: 6px; padding: 4px 10px; cursor: pointer; }
    button:hover { border-color: var(--accent); }
    main { display: grid; grid-template-columns: minmax(0, 1.3fr) minmax(0, 1fr); height: calc(100% - 53px); }
    #keys-pane { overflow: auto; border-right: 1px solid var(--line); }
    /* Rows of one fixed height, each contained: a changed row never makes the browser lay out the 10,000
       others, and rows out of view are not rendered at all. */
    .row { display: grid; grid-template-columns: minmax(0, 1fr) 72px 172px 72px 92px 160px; height: 31px;
      border-bottom: 1px solid var(--line); contain: layout style paint; content-visibility: auto;
      contain-intrinsic-size: auto 31px; }
    .row[hidden] { display: none; }
    .row.head { position: sticky; top: 0; z-index: 1; background: var(--panel); font-weight: 600; font-size: 12px;
      color: var(--muted); content-visibility: visible; }
    .cell { padding: 5px 8px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .head .cell { padding-top: 7px; }
    .cell.key { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
    .cell.num { text-align: right; font-variant-numeric: tabular-nums; }
    .muted { color: var(--muted); }
    /* A group: the keys under one "/" prefix (a collection's members), with their count; a click closes it. */
    .group { display: flex; gap: 8px; align-items: center; height: 31px; padding: 0 8px; cursor: pointer;
      border-bottom: 1px solid var(--line); background: var(--panel); font-weight: 600; }
    .group[hidden] { display: none; }
    .group .twisty { width: 12px; color: var(--muted); }
    .group .cell { padding: 0; }
    .group .count { font-weight: normal; font-size: 12px; }
    #keys .row { cursor: pointer; }
    #keys .row:hover { background: var(--panel); }
    #keys .row.selected { background: var(--select); }
    #keys .cell.flash-a { animation: flash-a 1.2s ease-out; }
    #keys .cell.flash-b { animation: flash-b 1.2s ease-out; }
    @keyframes flash-a { from { background: var(--flash); } to { background: transparent; } }
    @keyframes flash-b { from { background: var(--flash); } to { background: transparent; } }
    #timeline { overflow: auto; padding: 14px 18px; }
    #timeline h2 { font-size: 15px; margin: 0 0 10px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
      word-break: break-all; }
    #timeline .empty { color: var(--muted); margin-top: 40px; text-align: center; }
    article { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 12px; background: var(--panel); }
    article > .meta { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center; padding: 8px 12px;
      border-bottom: 1px solid var(--line); font-size: 13px; }
    article .version { font-weight: 600; }
    article .who { color: var(--muted); }
    article .meta button { margin-left: auto; padding: 2px 8px; font-size: 12px; }
    pre { margin: 0; padding: 10px 12px; overflow: auto; font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace;
      background: var(--bg); max-height: 320px; }
    .diff { padding: 6px 12px 8px; border-top: 1px solid var(--line); font: 12.5px/1.5 ui-monospace, SFMono-Regular,
      Menlo, monospace; }
    .diff div { white-space: pre-wrap; word-break: break-all; }
    .diff .added { color: var(--add); } .diff .removed { color: var(--del); } .diff .changed { color: var(--chg); }
    .diff .note { color: var(--muted); font-family: system-ui, sans-serif; }
    kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 4px; font-size: 11px; }
    .hint { font-size: 12px; color: var(--muted); }
    </style>
    </head>
    <body>
    <header>
      <h1>pld-tool serve</h1>
      <span id="store" class="store" title="{{STORE}}">{{STORE}}</span>
      <input id="filter" type="search" placeholder="Filter keys  ( / )" autocomplete="off" spellcheck="false"
        aria-label="Filter keys">
      <span id="count" class="muted"></span>
      <span id="status" class="down">connecting</span>
      <span id="notice" role="alert" hidden></span>
      <span class="hint"><kbd>↑</kbd><kbd>↓</kbd> <kbd>j</kbd><kbd>k</kbd> <kbd>Enter</kbd> <kbd>Esc</kbd></span>
      <button id="theme" type="button" title="Switch between light and dark">Theme</button>
    </header>
    <p id="limitation" role="status"{{LIMITED}}>{{LIMITATION}}</p>
    <p id="replicas" role="status" hidden></p>
    <main>
      <section id="keys-pane" role="table" aria-label="Keys">
        <div class="row head" role="row"><div class="cell" role="columnheader">Key</div><div class="cell num" role="columnheader">Version</div><div class="cell" role="columnheader">Written at</div><div class="cell num" role="columnheader">Schema</div><div class="cell" role="columnheader">Retention</div><div class="cell" role="columnheader">Attribution</div></div>
        <div id="keys" role="rowgroup"></div>
      </section>
      <section id="timeline" aria-label="Timeline"><p class="empty">Select a key to see its versions.</p></section>
    </main>
    """#
}
