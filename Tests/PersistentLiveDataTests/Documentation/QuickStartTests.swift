import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

// This file mirrors the README's quick start line for line: if it stops compiling or behaving as the
// README says, this test fails.

/// The lines the quick start prints: in this file, `print` records them for the test to check instead of
/// writing them among the test runner's output.
@MainActor private var printedLines: [String] = []

@MainActor private func print(_ line: String) {
  printedLines.append(line)
}

// README: begin quick start
struct Settings: Codable, Sendable, Equatable {
  var theme = "light"
  var fontSize = 14
}

@MainActor
final class SettingsScreen: LifecycleOwner {
  let scopeLifecycle = ScopeLifecycle()
  var shown: [String] = []
}

@MainActor
func showSettings(storedAt path: String) throws -> SettingsScreen {
  let store = try PersistentStore(path: path)  // created if missing
  let settings = try store.liveData("settings", default: Settings())

  let screen = SettingsScreen()
  settings.observe(owner: screen) { screen, settings in  // no [weak self] needed
    screen.shown.append("\(settings.theme) \(settings.fontSize)pt")
  }
  screen.scopeLifecycle.activate()  // delivers the current value

  try settings.update { $0.fontSize += 2 }  // version 1 is on disk, then observers hear of it
  try settings.set(Settings(theme: "dark", fontSize: 18))  // version 2
  for entry in try settings.history() {  // newest first
    print("v\(entry.version) \(entry.writtenAt): \(entry.value.theme)")
  }
  try settings.rollback(to: 1)  // version 3, with the content of version 1
  return screen
}
// README: end quick start

@Suite struct QuickStartTests {
  @MainActor
  @Test func readmeQuickStartRunsAsDocumented() throws {
    let folder = try TemporaryDirectory()
    let path = folder.path("app/settings.db")
    printedLines = []
    do {
      let screen = try showSettings(storedAt: path)
      #expect(screen.shown == ["light 14pt", "light 16pt", "dark 18pt", "light 16pt"])
      // The history it printed, newest first: "v2 2026-01-01 12:00:00 +0000: dark".
      #expect(printedLines.map { $0.prefix(3) } == ["v2 ", "v1 "])
      #expect(printedLines.map { $0.split(separator: ": ").last } == ["dark", "light"])
    }
    // The screen is gone, and with its observation the value and the store it kept open.

    // Run it again: the state continues from the file.
    let store = try PersistentStore(path: path)
    let settings = try store.liveData("settings", default: Settings())
    #expect(settings.version == 3)
    #expect(settings.value == Settings(theme: "light", fontSize: 16))
    try store.close()
  }

  @Test func readmeQuotesThisFile() throws {
    let snippet = try QuotedSnippets.snippet("quick start", label: "README")
    #expect(
      try QuotedSnippets.document("README.md").contains(snippet),
      "README.md's quick start differs from QuickStartTests.swift")
  }
}
