import Foundation
import PersistentLiveData

/// Where the list lives: --db PATH, else $PLD_TODO_DB, else $XDG_DATA_HOME/pld-todo/todo.db, else
/// ~/.local/share/pld-todo/todo.db. Takes `--db PATH` out of `arguments`.
///
/// - Throws: ``UsageError`` when `--db` has no path after it.
func databasePath(_ arguments: inout [String]) throws -> String {
  if let flag = arguments.firstIndex(of: "--db") {
    guard flag + 1 < arguments.count, !arguments[flag + 1].isEmpty else {
      throw UsageError("--db needs a path: pld-todo --db todo.db list")
    }
    let path = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
    return path
  }
  let environment = ProcessInfo.processInfo.environment
  if let path = environment["PLD_TODO_DB"], !path.isEmpty { return path }
  let dataHome =
    environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
    ?? "\(NSHomeDirectory())/.local/share"
  return "\(dataHome)/pld-todo/todo.db"
}

var arguments = Array(CommandLine.arguments.dropFirst())
do {
  // The command line is parsed before the store is opened: a usage error creates no file.
  let path = try databasePath(&arguments)
  let command = try TodoCommand(arguments)
  let app = try TodoApp(databasePath: path)
  try app.run(command)
} catch {
  FileHandle.standardError.write(Data("pld-todo: \(error)\n".utf8))
  exit(1)
}
