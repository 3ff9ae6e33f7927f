import Foundation
import PLDTestSupport
import PersistentLiveData
import Testing

@testable import pld_tool

/// Write commands write only to an existing store: a mistyped path is an error that creates no file and
/// no folder, unless `--create` asks for a new store (`set`, `import`; `rollback` and `prune` need stored
/// versions and always refuse a missing file).
@Suite(.ownThread) struct CreateOptionTests {
  /// The commands that may create a store, with what they need after the database path.
  private static func creatingCommands(_ directory: TemporaryDirectory) throws -> [[String]] {
    let file = try directory.write(#"{"key":"k","value":1}"# + "\n", to: "in.jsonl")
    return [["set", "k", "1"], ["set", "k", "1", "--json"], ["import", file], ["import", file, "--json"]]
  }

  @Test func aMissingStoreIsAnErrorAndNothingIsCreated() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let inDirectory = directory.path("typo.db")
    let inNewFolders = directory.path("typo/deeper/app.db")

    for command in try Self.creatingCommands(directory) {
      for path in [inDirectory, inNewFolders] {
        let arguments = [command[0], path] + command.dropFirst()
        #expect(
          runInProcess(arguments)
            == CommandResult(
              stdout: "",
              stderr: "Error: No store at \"\(path)\"; pass --create to create one.\n", status: 1),
          "\(arguments)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: inDirectory))
    #expect(!FileManager.default.fileExists(atPath: inDirectory + "-wal"))
    #expect(!FileManager.default.fileExists(atPath: directory.path("typo")))
  }

  @Test func theMissingStoreIsReportedBeforeTheInputIsChecked() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("typo.db")

    let message = "Error: No store at \"\(path)\"; pass --create to create one.\n"
    #expect(runInProcess(["set", path, "k", "{"]) == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(
      runInProcess(["import", path, directory.path("nope.jsonl")])
        == CommandResult(stdout: "", stderr: message, status: 1))
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  /// With `--create`, an empty (0-byte) file becomes the store, with the mode of a store pld-tool
  /// creates (0600), which its -wal and -shm files take from it — not the 0666 or 0644 `touch` gave it.
  @Test(arguments: ["set", "import"])
  func createAdoptsAnEmptyFileWithTheStoresMode(_ command: String) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.write("", to: "touched.db")
    #expect(chmod(path, 0o666) == 0)
    let file = try directory.write(#"{"key":"k","value":1}"# + "\n", to: "in.jsonl")
    let arguments =
      command == "set" ? ["set", path, "k", "1", "--create"] : ["import", path, file, "--create"]

    #expect(runInProcess(arguments).status == 0)
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    let store = try PersistentStore(path: path)
    #expect(try store.liveData("k", default: 0).value == 1)
    try store.liveData("k", default: 0).set(2)
    for name in [path, path + "-wal", path + "-shm"] {
      #expect(
        try FileManager.default.attributesOfItem(atPath: name)[.posixPermissions] as? Int == 0o600, "\(name)")
    }
    try store.close()
  }

  @Test func createMakesTheStoreAndItsFolders() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let setPath = directory.path("new/folders/set.db")
    let importPath = directory.path("other/import.db")
    let file = try directory.write(#"{"key":"k","value":[1,2]}"# + "\n", to: "in.jsonl")

    #expect(
      runInProcess(["set", setPath, "greeting", #""hi""#, "--create"])
        == CommandResult(stdout: "Wrote version 1 of key greeting.\n", stderr: "", status: 0))
    #expect(
      runInProcess(["import", "--create", importPath, file])
        == CommandResult(stdout: "Imported 1 version of 1 key from \"\(file)\".\n", stderr: "", status: 0))

    let store = try PersistentStore(path: setPath)
    defer { try? store.close() }
    #expect(try store.liveData("greeting", default: "").value == "hi")
    let imported = try PersistentStore(path: importPath)
    defer { try? imported.close() }
    #expect(try imported.liveData("k", default: [Int]()).value == [1, 2])
  }

  @Test func createOnAnExistingStoreWritesToIt() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.makeSampleStore()

    #expect(
      runInProcess(["set", path, "theme", #""dracula""#, "--create"])
        == CommandResult(stdout: "Wrote version 2 of key theme.\n", stderr: "", status: 0))
    // Without --create an existing store is written as before.
    #expect(
      runInProcess(["set", path, "theme", #""nord""#])
        == CommandResult(stdout: "Wrote version 3 of key theme.\n", stderr: "", status: 0))
    // --create never hides that a file is not a store.
    let text = try directory.write("notes\n", to: "notes.txt")
    #expect(
      runInProcess(["set", text, "k", "1", "--create"]).stderr
        == "Error: \"\(text)\" is not an SQLite database; it was left untouched.\n")
  }

  @Test func createIsDocumentedInTheHelpOfTheCommandsThatHaveIt() throws {
    for command in ["set", "import"] {
      let help = runInProcess([command, "--help"])
      #expect(help.status == 0)
      #expect(help.stdout.contains("[--create]"), "\(command)")
      #expect(
        help.stdout.contains(
          """
            --create                Create the store, and its folders, if the database
                                    file does not exist, or make an empty (0-byte) file
                                    the store, with mode 0600 (without it, a missing or
                                    empty file is an error and nothing is created or
                                    changed).
          """), "\(command)")
      #expect(help.stdout.contains("unless --create is given"), "\(command)")
    }
    // rollback and prune need stored versions: they have no --create.
    for command in ["rollback", "prune"] {
      #expect(!runInProcess([command, "--help"]).stdout.contains("--create"), "\(command)")
    }
    let rootHelp = runInProcess(["--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
    #expect(rootHelp.contains("set and import write only to an existing store unless --create is given."))
  }
}
