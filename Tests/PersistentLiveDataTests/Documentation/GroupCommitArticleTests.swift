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

  /// The task-group example of `PersistentStore.write(_:)`'s documentation: `_ =` makes it compile, and
  /// sixteen concurrent read-modify-writes lose no increment.
  @Test func theTaskGroupExampleOfWriteRuns() async throws {
    let folder = try TemporaryDirectory("article")
    let store = try PersistentStore(path: folder.path("store.db"))
    let counter = try store.liveData("counter", default: 0)

    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<16 {
        group.addTask { _ = try await store.write { try counter.update { $0 += 1 } } }
      }
      try await group.waitForAll()
    }

    #expect(counter.value == 16 && counter.version == 16)
  }
}
