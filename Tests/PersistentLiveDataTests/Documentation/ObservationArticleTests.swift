import Foundation
import Observation
import PersistentLiveData
import Synchronization
import Testing

#if canImport(SwiftUI)
import SwiftUI
#endif

// The code of the DocC articles "Using LiveData with SwiftUI and Observation" and "The main actor in
// command-line programs and daemons", line for line between the markers: if it stops compiling or
// behaving as the articles say, these tests fail. (The daemon is in Tests/Helpers/pld-test-child.)

// Article: begin tracking
/// Calls `render` with the current settings now, and again after every delivered version.
@MainActor
func keepRendering(
  _ settings: LiveData<Settings>, _ render: @escaping @MainActor @Sendable (Settings) -> Void
) {
  withObservationTracking {
    render(settings.value)  // reading `value` registers interest
  } onChange: {
    // Once, on the main actor, in the delivery of the next version: track again for the one after.
    Task { @MainActor in keepRendering(settings, render) }
  }
}
// Article: end tracking

// SwiftUI exists only on Apple platforms: this view is compiled there, not on Linux.
#if canImport(SwiftUI)
// Article: begin view
struct SettingsView: View {
  let settings: PersistentLiveData<Settings>  // store.liveData("settings", default: Settings())

  var body: some View {
    // Reading `value` in the body makes the view depend on it: every delivered version redraws it.
    VStack {
      Text("Theme: \(settings.value.theme), \(settings.value.fontSize) pt")
      Button("Larger") {
        _ = try? settings.update { $0.fontSize += 1 }  // main actor: delivered before it returns
      }
    }
  }
}
// Article: end view
#endif

// Article: begin starved
/// A synchronous main.swift, as a function: the main actor never runs, so the observer is never called.
@MainActor
func starvedProgram(storePath: String) throws {
  let store = try PersistentStore(path: storePath)
  let limit = try store.liveData("limit", default: 10)
  limit.observeForever { print("limit is now \($0)") }  // never called
  while true {
    sleep(1)  // meanwhile limit.value and limit.version follow other processes' writes
  }
}
// Article: end starved

@Suite struct ObservationArticleTests {
  @MainActor
  @Test func keepRenderingRendersTheCurrentAndEveryDeliveredVersion() async throws {
    let store = try PersistentStore.inMemory()
    let settings = try store.liveData("settings", default: Settings())
    let rendered = Mutex<[Int]>([])
    keepRendering(settings) { settings in rendered.withLock { $0.append(settings.fontSize) } }
    #expect(rendered.withLock { $0 } == [14])

    try settings.update { $0.fontSize = 16 }
    #expect(await waitFor { rendered.withLock { $0 } == [14, 16] })
    _ = try await Task.detached { try settings.update { $0.fontSize = 18 } }.value
    #expect(await waitFor { rendered.withLock { $0 } == [14, 16, 18] })
    try store.close()
  }

  @Test(arguments: [
    ("SwiftUIAndObservation.md", "tracking"), ("SwiftUIAndObservation.md", "view"),
    ("CommandLineProgramsAndDaemons.md", "starved"),
  ])
  func theArticleQuotesThisFile(article: String, snippet name: String) throws {
    let text = try QuotedSnippets.document("Sources/PersistentLiveData/PersistentLiveData.docc/\(article)")
    let snippet = try QuotedSnippets.snippet(name, label: "Article")
    #expect(text.contains(snippet), "\(article) differs from ObservationArticleTests.swift (\(name))")
  }
}

/// Polls `condition` on the main actor, letting main-actor work run, for at most 10 seconds.
@MainActor
private func waitFor(_ condition: @MainActor () -> Bool) async -> Bool {
  let deadline = ContinuousClock.now + .seconds(10)
  while !condition(), ContinuousClock.now < deadline {
    try? await Task.sleep(for: .milliseconds(1))
  }
  return condition()
}
