import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// The README's examples of a key's own retention and of read-only stores, line for line (between the
/// markers): if they stop compiling or behaving as the README says, these tests fail.
@Suite struct StoreLifeReadmeTests {
  @Test func aKeysOwnRetention() throws {
    let folder = try TemporaryDirectory("readme")
    let path = folder.path("state.db")
    // README: begin key retention
    let store = try PersistentStore(path: path, options: StoreOptions(retention: .last(100)))
    let heartbeat = try store.liveData("heartbeat", default: 0)  // last 100
    let flags = try store.liveData("flags", default: [String: Bool](), retention: .all)  // every version
    // README: end key retention
    for beat in 1...300 {
      try heartbeat.set(beat)
      try flags.update { $0["beat\(beat)"] = true }
    }
    #expect(try heartbeat.history().count == 100)
    #expect(try flags.history().count == 300)
  }

  @Test func aWriterAndAReadOnlyDashboard() throws {
    let folder = try TemporaryDirectory("readme")
    let path = folder.path("flags.db")
    // README: begin read-only stores
    var options = StoreOptions()
    options.applicationIdentifier = "com.example.flags"
    let writer = try PersistentStore(path: path, options: options)
    try writer.liveData("flags", default: [String: Bool]()).set(["beta": true])

    var reading = options
    reading.readOnly = true  // a dashboard in another process: reads and observes, never writes
    let dashboard = try PersistentStore(path: path, options: reading)
    let seen = try dashboard.liveData("flags", default: [String: Bool]())  // ["beta": true], version 1
    // README: end read-only stores
    #expect(seen.value == ["beta": true] && seen.version == 1)
    #expect(throws: PersistentLiveDataError.readOnly(path: path)) { try seen.set([:]) }
  }

  @Test(arguments: ["key retention", "read-only stores"])
  func readmeQuotesThisFile(_ name: String) throws {
    // The test's indentation (4 spaces) removed: the README's block as written.
    let snippet = try QuotedSnippets.snippet(name, label: "README", indent: 4)
    #expect(
      try QuotedSnippets.document("README.md").contains("```swift\n" + snippet + "```"),
      "README.md's \(name) example differs from this file")
  }
}
