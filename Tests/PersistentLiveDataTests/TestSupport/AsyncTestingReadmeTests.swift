import Foundation
import PersistentLiveData
import PersistentLiveDataTesting
import Testing

// This file mirrors the README's example of testing async code line for line: if it stops compiling or
// behaving as the README says, this test fails.

// README: begin async testing
@MainActor @Test func countsEveryVersion() async throws {
  let store = try PersistentStore.inMemory()
  let count = try store.liveData("count", default: 0)
  Task { for _ in 1...3 { try count.update { $0 += 1 } } }

  try await waitUntil(timeout: .seconds(30)) { count.value == 3 }  // else throws AsyncWaitError
  let changes = try await count.changes(since: 0).next(3, timeout: .seconds(30))
  #expect(changes.map(\.value) == [1, 2, 3])
  #expect(try await count.values.next(1, timeout: .seconds(30)) == [3])
}
// README: end async testing

@Suite struct AsyncTestingReadmeTests {
  @Test func readmeQuotesThisFile() throws {
    let snippet = try QuotedSnippets.snippet("async testing", label: "README")
    #expect(
      try QuotedSnippets.document("README.md").contains(snippet),
      "README.md's async testing example differs from this file")
  }
}
