import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

/// The page says which store it serves, and what it cannot do with it: the header names the file
/// (escaped as text), and a file in a folder that is not writable — opened immutable, not followed live —
/// is said on standard error and on the page.
@Suite(.ownThread) struct ServeStoreNameTests {
  @Test func theHeaderNamesTheFileAsText() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let folder = directory.path("a<b>&\"c\"")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let path = folder + "/app.db"
    let store = try PersistentStore(path: path)
    try store.liveData("k", default: 0).set(1)
    try store.close()
    let server = try ServeProcess([path])
    let page = try server.get("/").body
    #expect(page.contains("a&lt;b&gt;&amp;&quot;c&quot;/app.db"), "the path, escaped")
    #expect(!page.contains("a<b>"))
    #expect(page.contains(#"<p id="limitation" role="status" hidden></p>"#), "nothing to say: hidden")
    #expect(page.contains(#"<p id="replicas" role="status" hidden></p>"#), "a file has no replicas")
    let replicas = try server.get("/api/replicas")
    #expect(replicas.status == 200 && replicas.body.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    #expect(server.stop() == 0)
  }

  @Test func aFileInAFolderThatIsNotWritableIsSaidOnStderrAndOnThePage() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") else { return }
    guard (try? PLDTestSupport.run("/usr/bin/chattr", ["+i", directory.path]))?.status == 0 else { return }
    defer { _ = try? PLDTestSupport.run("/usr/bin/chattr", ["-i", directory.path]) }
    let server = try ServeProcess([path])
    let said = try #require(server.process.readErrorLine(timeout: 10))
    #expect(said.contains("is not writable") && said.contains("does not follow new versions"), "\(said)")
    let page = try server.get("/").body
    #expect(page.contains(#"<p id="limitation" role="status">the folder of "#), "said on the page")
    #expect(try server.get("/api/keys").status == 200, "and served")
    #expect(server.stop() == 0)
  }
}
