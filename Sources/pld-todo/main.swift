import Foundation
import PersistentLiveData

/// Where the list lives: --db PATH, else $PLD_TODO_DB, else $XDG_DATA_HOME/pld-todo/todo.db, else
/// ~/.local/share/pld-todo/todo.db.
func databasePath(_ arguments: inout [String]) -> String {
  if let flag = arguments.firstIndex(of: "--db"), flag + 1 < arguments.count {
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
let path = databasePath(&arguments)
do {
  let app = try TodoApp(databasePath: path)
  try app.run(arguments)
} catch {
  FileHandle.standardError.write(Data("pld-todo: \(error)\n".utf8))
  exit(1)
}
