import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// The group-commit section of "Persistence and durability", as written there.
@Suite struct GroupCommitArticleTests {
  struct Settings: Codable, Sendable, Equatable {
    var theme = "light"
    var fontSize = 14
  }

  @Test func theArticlesExampleRuns() async throws {
    let folder = try TemporaryDirectory("article")
    let store = try PersistentStore(path: folder.path("store.db"))
    let settings = try store.liveData("settings", default: Settings())
    let checking = try store.liveData("checking", default: 100)
    let savings = try store.liveData("savings", default: 0)

    try await settings.write(Settings(theme: "dark", fontSize: 16))
    let balance = try await store.write {
      try checking.update { $0 -= 10 }
      return try savings.update { $0 += 10 }
    }

    #expect(settings.value == Settings(theme: "dark", fontSize: 16))
    #expect(balance == 10 && checking.value == 90 && savings.value == 10)
  }
}
